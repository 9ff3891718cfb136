// Amounts, stakes and game names as the lobby shows them. Amounts are integer minor units (bigint
// on the wire): never floating point.
import { Currency } from "./gen/cardroom/v1/common_pb.js";
import type { Stakes } from "./gen/cardroom/v1/dealer_pb.js";

const STRUCTURES: Record<string, string> = {
  F: "Fixed Limit",
  S: "Spread Limit",
  P: "Pot Limit",
  H: "Half-Pot Limit",
  N: "No Limit",
};
const GAMES: Record<string, string> = {
  T: "Hold'em",
  O: "Omaha",
  "O/8": "Omaha Hi/Lo",
  "7S": "Seven Card Stud",
  "7S/8": "Seven Card Stud Hi/Lo",
  "5CD": "Five Card Draw",
  "2L3D": "2-7 Triple Draw",
  SK: "Soko",
};

/** "NT" -> "No Limit Hold'em", "PO/8" -> "Pot Limit Omaha Hi/Lo"; an unknown code stays as it is. */
export function gameName(variant: string): string {
  const structure = STRUCTURES[variant.charAt(0)];
  const game = GAMES[variant.slice(1)];
  return structure && game ? `${structure} ${game}` : variant;
}

function grouped(n: bigint): string {
  const digits = (n < 0n ? -n : n).toString();
  const parts: string[] = [];
  for (let end = digits.length; end > 0; end -= 3) parts.unshift(digits.slice(Math.max(0, end - 3), end));
  return (n < 0n ? "-" : "") + parts.join(",");
}

/** Play chips as a whole number; cash (cents) as dollars and cents. */
export function amount(value: bigint, currency: Currency): string {
  if (currency === Currency.CASH) {
    const sign = value < 0n ? "-" : "";
    const abs = value < 0n ? -value : value;
    return `${sign}$${grouped(abs / 100n)}.${(abs % 100n).toString().padStart(2, "0")}`;
  }
  return grouped(value);
}

export function currencyName(currency: Currency): string {
  return currency === Currency.CASH ? "cash" : currency === Currency.PLAY ? "play" : "?";
}

/** Blinds "1/2" for blind games, bets "2/4" for limit and stud games (as `cardroom play` shows them). */
export function stakesText(stakes: Stakes | undefined, currency: Currency): string {
  if (!stakes) return "?";
  if (stakes.bigBlind > 0n) return `${amount(stakes.smallBlind, currency)}/${amount(stakes.bigBlind, currency)}`;
  const big = stakes.bigBet > 0n ? stakes.bigBet : stakes.smallBet * 2n;
  return `${amount(stakes.smallBet, currency)}/${amount(big, currency)}`;
}
