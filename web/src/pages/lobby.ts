// The lobby: cash tables grouped by game with stakes, seats, buy-ins, the hands dealt and the last
// hour's average pot and hands per hour (the gateway's Lobby), and
// the tournaments (tournaments.ts), the player's balances (MyBalance) and his last hands (MyHands) with an export of them as one
// PokerStars text file (the dealer renders it: HANDS_FORMAT_POKERSTARS). Each table opens its page
// (#/table/<id>: sit down, play).
import { describeError, gateway, isUnauthenticated } from "../api.js";
import { h, messageLine } from "../dom.js";
import { amount, currencyName, gameName, stakesText } from "../format.js";
import type { RecentHand } from "../gen/cardroom/v1/dealer_pb.js";
import { HandsFormat, type LobbyTable, type MyHandsResponse, type PlayerBalance } from "../gen/cardroom/v1/gateway_pb.js";
import { session } from "../session.js";
import { tournamentsSection } from "./tournaments.js";

function balances(list: PlayerBalance[]): HTMLElement {
  return h(
    "section",
    { class: "card", "data-testid": "balance" },
    h("h2", {}, "Your balance"),
    h(
      "ul",
      {},
      ...list.map((b) =>
        h(
          "li",
          { "data-currency": currencyName(b.currency), "data-amount": b.balance.toString() },
          h("span", { class: "label" }, currencyName(b.currency) === "play" ? "Play chips" : "Cash"),
          " ",
          h("strong", { class: "amount" }, amount(b.balance, b.currency)),
        ),
      ),
    ),
  );
}

function buyIn(table: LobbyTable): string {
  const low = amount(table.minBuyIn, table.currency);
  return table.maxBuyIn > 0n ? `${low} – ${amount(table.maxBuyIn, table.currency)}` : `${low} or more`;
}

function tableRow(table: LobbyTable): HTMLTableRowElement {
  return h(
    "tr",
    { "data-table-id": table.tableId, "data-variant": table.variant },
    h("td", { class: "name" }, table.name || table.tableId),
    h("td", { class: "stakes" }, stakesText(table.stakes, table.currency)),
    h("td", { class: "currency" }, currencyName(table.currency)),
    h("td", { class: "seats" }, `${table.seatsTaken}/${table.seats}`),
    h("td", { class: "buy-in" }, buyIn(table)),
    h("td", { class: "hands" }, table.handsDealt.toString()),
    h(
      "td",
      { class: "average-pot", "data-amount": table.averagePot.toString() },
      table.handsPerHour > 0 ? amount(table.averagePot, table.currency) : "–",
    ),
    h("td", { class: "hands-per-hour", "data-rate": String(table.handsPerHour) }, String(table.handsPerHour)),
    h(
      "td",
      {},
      h("a", { href: `#/table/${encodeURIComponent(table.tableId)}`, "data-testid": "open-table" }, "Open"),
    ),
  );
}

function tables(list: LobbyTable[]): HTMLElement {
  const section = h("section", { class: "card", "data-testid": "lobby" }, h("h2", {}, "Cash tables"));
  if (list.length === 0) {
    section.append(h("p", { "data-testid": "lobby-empty" }, "No open tables right now."));
    return section;
  }
  const byGame = new Map<string, LobbyTable[]>();
  for (const table of list) byGame.set(table.variant, [...(byGame.get(table.variant) ?? []), table]);
  for (const [variant, group] of [...byGame.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    section.append(
      h(
        "div",
        { class: "game", "data-game": variant },
        h("h3", {}, gameName(variant), " ", h("small", {}, variant)),
        h(
          "table",
          {},
          h(
            "thead",
            {},
            h("tr", {}, ...["Table", "Stakes", "Money", "Seats", "Buy-in", "Hands", "Avg pot", "Hands/h", ""].map((t) => h("th", {}, t))),
          ),
          h("tbody", {}, ...group.map(tableRow)),
        ),
      ),
    );
  }
  return section;
}

const HISTORY = 20; // hands shown (the dealer keeps the last 50 per player)

function handRow(hand: RecentHand): HTMLTableRowElement {
  const mine = hand.seats.find((s) => s.seat === hand.seat);
  const when = hand.finishedAt ? new Date(Number(hand.finishedAt.seconds) * 1000).toLocaleString() : "";
  return h(
    "tr",
    { "data-hand-id": hand.handId, "data-net": hand.net.toString(), "data-table-id": hand.tableId },
    h("td", { class: "when" }, when),
    h("td", { class: "table" }, hand.tableId),
    h("td", { class: "hand" }, `#${hand.handNumber}`),
    h("td", { class: "game" }, gameName(hand.variant)),
    h("td", { class: "cards" }, (mine?.cards ?? []).join(" ")),
    h("td", { class: "board" }, hand.board.join(" ")),
    h("td", { class: "net" }, `${hand.net > 0n ? "+" : ""}${amount(hand.net, hand.currency)}`),
  );
}

/** The last hands, newest first, and the export: the PokerStars text (oldest first) as a file. */
function history(reply: MyHandsResponse): HTMLElement {
  const section = h("section", { class: "card", "data-testid": "history" }, h("h2", {}, "Your last hands"));
  if (reply.hands.length === 0) {
    section.append(h("p", { "data-testid": "history-empty" }, "No hands played yet."));
    return section;
  }
  const file = new Blob([reply.pokerstars], { type: "text/plain" });
  const stamp = new Date().toISOString().slice(0, 19).replace(/[-:T]/g, "");
  const download = h(
    "a",
    {
      href: URL.createObjectURL(file),
      download: `cardroom-${reply.playerId}-${stamp}.txt`,
      "data-testid": "export-pokerstars",
    },
    "Export as PokerStars text",
  );
  const text = h("pre", { class: "pokerstars", "data-testid": "pokerstars" }, reply.pokerstars);
  section.append(
    h(
      "table",
      {},
      h(
        "thead",
        {},
        h("tr", {}, ...["Finished", "Table", "Hand", "Game", "Your cards", "Board", "Net"].map((t) => h("th", {}, t))),
      ),
      h("tbody", {}, ...reply.hands.map(handRow)),
    ),
    h("p", {}, download),
    h("details", {}, h("summary", {}, "PokerStars text"), text),
  );
  return section;
}

export async function lobbyPage(root: HTMLElement, go: (route: string) => void): Promise<void> {
  if (!session.token()) return go("#/login");
  const message = messageLine();
  const refresh = h("button", { type: "button", "data-testid": "refresh" }, "Refresh");
  const body = h("div", { class: "lobby" });
  root.replaceChildren(
    h("div", { class: "toolbar" }, h("h1", {}, `Lobby — ${session.playerId() ?? ""}`), refresh),
    message.element,
    body,
  );
  const tournaments = tournamentsSection(message.say, () => load(false));
  const load = async (announce = true): Promise<void> => {
    if (announce) message.say("Loading…");
    try {
      const [lobby, balance, hands] = await Promise.all([
        gateway().lobby({}),
        gateway().myBalance({}),
        gateway().myHands({ limit: HISTORY, format: HandsFormat.POKERSTARS }),
      ]);
      await tournaments.load();
      body.replaceChildren(balances(balance.balances), tables(lobby.tables), tournaments.element, history(hands));
      if (announce) message.say(`${lobby.tables.length} table(s) open.`);
    } catch (error) {
      if (isUnauthenticated(error)) {
        session.clear();
        return go("#/login");
      }
      message.say(describeError(error), true);
    }
  };
  refresh.addEventListener("click", () => void load());
  await load();
}
