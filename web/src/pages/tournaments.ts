// The lobby's tournaments (the gateway's TournamentLobby): status, entrants, prize pool, buy-in +
// fee, the level with its blinds and the time to the next one, one line each; Details opens the
// tournament's page (GetTournament: starting stack, payouts, level and blinds, and the player's own
// status from MyTournamentStatus: table, seat, chips, place) with Register / Unregister (the buy-in
// and the fee leave the cash account, and come back as paid; each with its own request id) and,
// once it runs, "Open my table" (#/tournament/<id>: pages/tournament-table.ts).
import { Code, ConnectError } from "@connectrpc/connect";
import { describeError, gateway } from "../api.js";
import { h } from "../dom.js";
import { amount, gameName } from "../format.js";
import { Currency } from "../gen/cardroom/v1/common_pb.js";
import type { LobbyTournament } from "../gen/cardroom/v1/gateway_pb.js";
import {
  TournamentFormat,
  TournamentStatus,
  type TournamentInfo,
  type TournamentLevel,
  type TournamentPlayerStatus,
} from "../gen/cardroom/v1/tournament_pb.js";

const cents = (value: bigint): string => amount(value, Currency.CASH);

const STATUS: Record<number, string> = {
  [TournamentStatus.REGISTRATION]: "registering",
  [TournamentStatus.RUNNING]: "running",
  [TournamentStatus.FINISHED]: "finished",
  [TournamentStatus.CANCELLED]: "cancelled",
};
const FORMAT: Record<number, string> = {
  [TournamentFormat.UNSPECIFIED]: "MTT",
  [TournamentFormat.MTT]: "MTT",
  [TournamentFormat.SNG]: "Sit & Go",
  [TournamentFormat.REBUY]: "Re-buy",
  [TournamentFormat.SATELLITE]: "Satellite",
  [TournamentFormat.FREEROLL]: "Freeroll",
  [TournamentFormat.HEADS_UP]: "Heads-up",
  [TournamentFormat.SHOOTOUT]: "Shootout",
};

function requestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return `web-${Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}

export function statusName(status: TournamentStatus): string {
  return STATUS[status] ?? "?";
}

/** "$10.00 + $1.00" (buy-in into the prize pool + the house's fee), "free" for a freeroll. */
export function buyInText(buyIn: bigint, fee: bigint): string {
  return buyIn === 0n && fee === 0n ? "free" : `${cents(buyIn)} + ${cents(fee)}`;
}

/** A level's blinds "10/20" (", ante 5"), or its bets "20/40" in limit games (tournament chips). */
export function blindsText(level: TournamentLevel | undefined): string {
  if (!level) return "–";
  const ante = level.ante > 0n ? `, ante ${level.ante}` : "";
  if (level.bigBlind > 0n) return `${level.smallBlind}/${level.bigBlind}${ante}`;
  return `${level.smallBet}/${level.bigBet}${ante}`;
}

/** Seconds as "m:ss". */
export function clockText(seconds: number): string {
  const whole = Math.max(0, Math.floor(seconds));
  return `${Math.floor(whole / 60)}:${String(whole % 60).padStart(2, "0")}`;
}

/** 1 -> "1st", 2 -> "2nd", 11 -> "11th". */
export function placeText(place: number): string {
  const tens = place % 100;
  const suffix = tens >= 11 && tens <= 13 ? "th" : (["th", "st", "nd", "rd"][place % 10] ?? "th");
  return `${place}${suffix}`;
}

export function prizeText(prize: bigint): string {
  return prize > 0n ? ` (${cents(prize)} won)` : "";
}

/** The player's own status in words: "registered", "active at table 2, seat 3 with 1500 chips",
 * "busted, 5th". */
export function mineText(mine: TournamentPlayerStatus | undefined): string {
  if (!mine) return "not registered";
  if (mine.place > 0) return `${mine.status}, ${placeText(mine.place)}${prizeText(mine.prize)}`;
  if (mine.table > 0) return `${mine.status} at table ${mine.table}, seat ${mine.seat} with ${mine.chips} chips`;
  return mine.status;
}

// The countdowns to the next level (data-deadline: epoch milliseconds) tick once a second.
window.setInterval(() => {
  for (const cell of document.querySelectorAll<HTMLElement>("[data-deadline]")) {
    const left = (Number(cell.getAttribute("data-deadline")) - Date.now()) / 1000;
    const text = clockText(left);
    cell.textContent = cell.getAttribute("data-field") === "next-level" ? ` — next level in ${text}` : text;
  }
}, 1000);

function levelText(t: LobbyTournament): string {
  if (t.level === 0) return `not started (${blindsText(t.blinds)})`;
  return `${t.level}: ${blindsText(t.blinds)}${t.onBreak ? " (break)" : ""}`;
}

function entrantsText(t: LobbyTournament): string {
  const most = t.maxEntrants > 0 ? t.maxEntrants : t.sitAndGoSize;
  return most > 0 ? `${t.entrants}/${most}` : String(t.entrants);
}

function row(t: LobbyTournament, open: (id: string) => void): HTMLTableRowElement {
  const details = h("button", { type: "button", "data-testid": "tournament-details" }, "Details");
  details.addEventListener("click", () => open(t.tournamentId));
  return h(
    "tr",
    {
      "data-tournament-id": t.tournamentId,
      "data-status": statusName(t.status),
      "data-entrants": String(t.entrants),
      "data-prize-pool": t.prizePool.toString(),
      "data-buy-in": t.buyIn.toString(),
      "data-fee": t.fee.toString(),
    },
    h("td", { class: "name" }, t.name || t.tournamentId),
    h("td", { class: "format" }, FORMAT[t.format] ?? "?"),
    h("td", { class: "game" }, gameName(t.variant)),
    h("td", { class: "status" }, statusName(t.status)),
    h("td", { class: "buy-in" }, buyInText(t.buyIn, t.fee)),
    h("td", { class: "entrants" }, entrantsText(t)),
    h("td", { class: "prize-pool" }, cents(t.prizePool)),
    h("td", { class: "level", "data-level": String(t.level) }, levelText(t)),
    t.level > 0 && !t.onBreak && t.status === TournamentStatus.RUNNING
      ? h("td", { class: "next-level", "data-deadline": String(Date.now() + t.secondsToNextLevel * 1000) }, clockText(t.secondsToNextLevel))
      : h("td", { class: "next-level" }, "–"),
    h("td", {}, details),
  );
}

/** The lobby's tournaments section; `say` is the lobby's message line, `changed` reloads the lobby
 * (the balance and the entrants after a registration). */
export function tournamentsSection(
  say: (text: string, error?: boolean) => void,
  changed: () => Promise<void>,
): { element: HTMLElement; load(): Promise<void> } {
  const list = h("div", { "data-testid": "tournament-list" });
  const page = h("div", { class: "tournament", "data-testid": "tournament" });
  const element = h("section", { class: "card", "data-testid": "tournaments" }, h("h2", {}, "Tournaments"), list, page);
  let shown = "";

  const open = async (id: string): Promise<void> => {
    shown = id;
    try {
      const [info, mine] = await Promise.all([
        gateway().getTournament({ tournamentId: id }),
        gateway()
          .myTournamentStatus({ tournamentId: id })
          .catch(() => undefined), // NOT_REGISTERED
      ]);
      page.replaceChildren(...details(info, mine));
    } catch (error) {
      say(describeError(error), true);
    }
  };

  const entry = async (id: string, register: boolean): Promise<void> => {
    try {
      const request = { tournamentId: id, requestId: requestId() };
      const reply = register
        ? await gateway().registerTournament(request)
        : await gateway().unregisterTournament(request);
      say(register ? `Registered: ${cents(reply.paid)} paid.` : `Unregistered: ${cents(reply.paid)} back.`);
      await changed();
    } catch (error) {
      say(describeError(error), true);
    }
  };

  function details(info: TournamentInfo, mine: TournamentPlayerStatus | undefined): Node[] {
    const registering = info.status === TournamentStatus.REGISTRATION;
    const playing = info.status === TournamentStatus.RUNNING && mine !== undefined && mine.place === 0;
    const table = h(
      "a",
      { href: `#/tournament/${encodeURIComponent(info.tournamentId)}`, "data-testid": "open-tournament-table" },
      "Open my table",
    );
    const register = h("button", { type: "button", "data-testid": "register" }, "Register");
    const unregister = h("button", { type: "button", "data-testid": "unregister" }, "Unregister");
    register.addEventListener("click", () => void entry(info.tournamentId, true));
    unregister.addEventListener("click", () => void entry(info.tournamentId, false));
    const facts: [string, string, string][] = [
      ["status", "Status", statusName(info.status)],
      ["buy-in", "Buy-in", buyInText(info.buyIn, info.fee)],
      ["entrants", "Entrants", String(info.entrants)],
      ["prize-pool", "Prize pool", cents(info.prizePool) + (info.guarantee > 0n ? ` (${cents(info.guarantee)} guaranteed)` : "")],
      ["starting-stack", "Starting stack", info.startingStack.toString()],
      ["level", "Level", info.level > 0 ? `${info.level}: ${blindsText(info.blinds)}` : `not started (${blindsText(info.blinds)})`],
      ["next-level", "Next level in", info.level > 0 && !info.onBreak ? clockText(info.secondsToNextLevel) : "–"],
      ["payouts", "Payouts", info.payouts.map((p, i) => `${i + 1}. ${cents(p)}`).join(", ") || "–"],
      ["mine", "You", mineText(mine)],
    ];
    return [
      h("h3", {}, info.name || info.tournamentId, " ", h("small", {}, gameName(info.variant))),
      h(
        "dl",
        { "data-tournament-id": info.tournamentId },
        ...facts.flatMap(([key, label, value]) => [h("dt", {}, label), h("dd", { "data-field": key }, value)]),
      ),
      ...(registering ? [mine ? unregister : register] : []),
      ...(playing ? [table] : []),
    ];
  }

  const load = async (): Promise<void> => {
    try {
      const lobby = await gateway().tournamentLobby({});
      if (lobby.tournaments.length === 0) {
        list.replaceChildren(h("p", { "data-testid": "tournaments-empty" }, "No tournaments right now."));
      } else {
        const head = ["Tournament", "Format", "Game", "Status", "Buy-in", "Entrants", "Prize pool", "Level", "Next level", ""];
        list.replaceChildren(
          h(
            "table",
            {},
            h("thead", {}, h("tr", {}, ...head.map((t) => h("th", {}, t)))),
            h("tbody", {}, ...lobby.tournaments.map((t) => row(t, (id) => void open(id)))),
          ),
        );
      }
      if (shown) await open(shown);
    } catch (error) {
      const off = ConnectError.from(error).code === Code.FailedPrecondition;
      list.replaceChildren(
        h("p", { "data-testid": "tournaments-empty" }, off ? "No tournaments at this card room." : describeError(error)),
      );
    }
  };
  return { element, load };
}
