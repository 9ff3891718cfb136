// Cards drawn as cards: "As" -> A♠ in black, "Kh" -> K♥ in red; "??" a card's back. Only a card
// the dealer sent face up to this player carries its code (data-card): a hidden one has none.
import { h } from "../dom.js";
import { HIDDEN } from "./fold.js";

const SUITS: Record<string, string> = { s: "♠", h: "♥", d: "♦", c: "♣" };

export function cardElement(card: string, up = false): HTMLElement {
  if (card === HIDDEN || card.length !== 2) return h("span", { class: "pcard back", "data-hidden": "" });
  const [rank, suit] = [card.charAt(0), card.charAt(1)];
  const red = suit === "h" || suit === "d";
  return h(
    "span",
    { class: `pcard${red ? " red" : ""}${up ? " up" : ""}`, "data-card": card, title: card },
    rank === "T" ? "10" : rank,
    SUITS[suit] ?? suit,
  );
}
