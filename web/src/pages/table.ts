// One table, drawn as a table: the seats around it (names, stacks, bets in front, the button, the
// cards: one's own face up, the others' backs until the dealer shows them), the board and the
// pots in the middle, whose turn with his clock, the legal actions only with a bet box and slider
// bounded by the legal amounts, the hand's result, sit down (waiting for the big blind or posting it
// now) / add chips between hands (up to the table's maximum) / post the big blind now / sit out / leave.
//
// A tournament's table (options.tournament: pages/tournament-table.ts opens it) is the same view with
// no buy-in, no adding chips, no sitting out and no leaving: the tournament seats the player, and the
// page returns when he leaves it (moved to another table, busted) or it closes.
//
// The events come from WatchMyTable (its first event names the session), folded by TableModel;
// actions and seat commands go as TableCommand calls of that session. A dropped stream is opened
// again (a new session and a fresh snapshot): the table view resumes.
import { ConnectError, Code } from "@connectrpc/connect";
import { describeError, gateway, isUnauthenticated } from "../api.js";
import { reconnectDelayMs } from "../backoff.js";
import { h, messageLine } from "../dom.js";
import { amount, currencyName, gameName } from "../format.js";
import { Currency } from "../gen/cardroom/v1/common_pb.js";
import { ActionType } from "../gen/cardroom/v1/dealer_pb.js";
import type { LegalActionsView } from "../gen/cardroom/v1/dealer_pb.js";
import { SeatCommand_Kind, type PlayEvent } from "../gen/cardroom/v1/gateway_pb.js";
import { session } from "../session.js";
import { cardElement } from "../table/cards.js";
import { HIDDEN, TableModel, type SeatState } from "../table/fold.js";
import { choices, clamp } from "../table/legal.js";

function requestId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

function seconds(ts: { seconds: bigint; nanos: number } | undefined): number | undefined {
  return ts === undefined ? undefined : Number(ts.seconds) + ts.nanos / 1e9;
}

/** The turn's clocks as the terminal client words them (view.py clock_text). */
export function clockText(la: LegalActionsView | null, now: number): string | undefined {
  const deadline = seconds(la?.deadline);
  if (!la || deadline === undefined) return undefined;
  if (la.timeBankRunning) return `time bank ${Math.max(0, deadline - now).toFixed(0)} s`;
  const action = seconds(la.actionDeadline) ?? deadline;
  let text = `action clock ${Math.max(0, action - now).toFixed(0)} s`;
  if (la.timeBankSeconds > 0) text += `, time bank ${la.timeBankSeconds.toFixed(0)} s`;
  return text;
}

/** Where seat `n` of `count` sits around the oval, in percent of the felt: one's own at the bottom. */
function place(n: number, count: number, mine: number, radius: number): { left: string; top: string } {
  const angle = Math.PI / 2 + (2 * Math.PI * (n - mine)) / count;
  return { left: `${50 + radius * Math.cos(angle)}%`, top: `${50 + radius * 0.88 * Math.sin(angle)}%` };
}

function marks(model: TableModel, s: SeatState): string {
  const out: string[] = [];
  if (s.folded) out.push("folded");
  if (s.sittingOut) out.push("sitting out");
  else if (s.waitingForBigBlind) out.push("waiting for the big blind");
  if (!s.connected) out.push("disconnected");
  if (s.drawn !== null && model.inHand) out.push(s.drawn ? `drew ${s.drawn}` : "stood pat");
  if (s.queuedChips > 0n) out.push(`+${s.queuedChips} next hand`);
  return out.join(", ");
}

/** His seat changes that take the player away from a tournament table (the tournament moved him, he
 * busted, or was removed). */
const GONE = new Set(["moved_out", "busted", "removed"]);

export interface TableOptions {
  /** A tournament's table: no buy-in, add chips, sit out or leave. */
  tournament?: {
    /** Shown above the table (the tournament page keeps it up to date). */
    banner: HTMLElement;
    /** Closes the table page from outside (the tournament moved the player). */
    signal: AbortSignal;
  };
}

/** Why a table page returned: "gone" (a tournament's table left or closed), else "done". */
export type TableEnd = "gone" | "done";

export async function tablePage(
  root: HTMLElement,
  go: (route: string) => void,
  tableId: string,
  options: TableOptions = {},
): Promise<TableEnd> {
  const me = session.playerId();
  if (!session.token() || !me) {
    go("#/login");
    return "done";
  }
  const viewer: string = me;
  const tournament = options.tournament;
  const route = window.location.hash;
  const stop = new AbortController();
  tournament?.signal.addEventListener("abort", () => stop.abort());
  let model = new TableModel(me);
  let sessionId = "";
  let balance: { value: bigint; currency: Currency } | undefined;
  let leaving = false;
  // the bet box keeps its value while the same turn is drawn again; the discards picked for a draw
  let turnKey = "";
  let drawnKey = "";
  let turnSequence = 0n; // the table event sequence of the last turn started
  let box = 0n;
  const discards = new Set<string>();

  const message = messageLine();
  const title = h("h1", {}, tableId);
  const leave = h("button", { type: "button", "data-testid": "leave" }, "Leave table");
  const sitOut = h("button", { type: "button", "data-testid": "sit-out" }, "Sit out");
  const balanceLine = h("p", { "data-testid": "table-balance" });
  const felt = h("div", { class: "felt", "data-testid": "felt" });
  const turn = h("p", { class: "turn", "data-testid": "turn" });
  const actions = h("div", { class: "actions", "data-testid": "actions", "data-my-turn": "false" });
  const sit = h("form", { class: "sit", "data-testid": "sit" });
  const topUp = h("form", { class: "add-chips", "data-testid": "add-chips" });
  const postNow = h("button", { type: "button", "data-testid": "post-now", hidden: "" }, "Post the big blind now");
  const last = h("p", { class: "last", "data-testid": "last" });
  const results = h("ul", { class: "results", "data-testid": "results" });
  const lobby = h("a", { href: "#/lobby", "data-testid": "to-lobby" }, "Lobby");
  const page = h(
    "div",
    {
      class: "table-page",
      "data-testid": "table-page",
      "data-table-id": tableId,
      "data-tournament": tournament ? "true" : "false",
    },
    tournament?.banner ?? null,
    h("div", { class: "toolbar" }, title, tournament ? h("div", {}, lobby) : h("div", {}, postNow, " ", sitOut, " ", leave)),
    tournament ? null : balanceLine,
    message.element,
    felt,
    turn,
    actions,
    sit,
    topUp,
    last,
    results,
  );
  root.replaceChildren(page);

  const money = (value: bigint): string => amount(value, model.currency);

  const refreshBalance = async (): Promise<void> => {
    if (tournament) return; // tournament chips: the wallet is not at this table
    try {
      const reply = await gateway().myBalance({});
      const currency = model.currency === Currency.CASH ? Currency.CASH : Currency.PLAY;
      const found = reply.balances.find((b) => b.currency === currency);
      balance = found ? { value: found.balance, currency } : undefined;
      drawBalance();
    } catch (error) {
      if (!stop.signal.aborted) message.say(describeError(error), true);
    }
  };

  const drawBalance = (): void => {
    if (!balance) return;
    balanceLine.setAttribute("data-amount", balance.value.toString());
    balanceLine.textContent = `Your ${currencyName(balance.currency)} balance: ${amount(balance.value, balance.currency)}`;
  };

  const command = async (
    kind: Parameters<ReturnType<typeof gateway>["tableCommand"]>[0]["kind"],
  ): Promise<PlayEvent | undefined> => {
    if (!sessionId) return undefined;
    try {
      return await gateway().tableCommand({ sessionId, requestId: requestId(), kind });
    } catch (error) {
      if (isUnauthenticated(error)) {
        session.clear();
        go("#/login");
      } else message.say(describeError(error), true);
      return undefined;
    }
  };

  const act = async (action: ActionType, to = 0n, cards: string[] = []): Promise<void> => {
    actions.setAttribute("data-busy", "true");
    const done = await command({
      case: "act",
      value: { action, amount: to, discards: cards, handNumber: model.handNumber },
    });
    actions.removeAttribute("data-busy");
    if (done) message.say("");
  };

  function drawSeat(s: SeatState, count: number, mine: number): HTMLElement[] {
    const mineNow = s.playerId === me;
    const toAct = model.toAct !== null && model.toAct.seat === s.seat;
    const drawing =
      mineNow && model.myTurn() && (model.toAct?.actions ?? []).includes(ActionType.DRAW) && !s.cards.includes(HIDDEN);
    const cards = h("div", { class: "cards" });
    s.cards.forEach((card, i) => {
      const element = cardElement(card, s.up[i] ?? false);
      if (drawing) {
        element.classList.add("pick");
        element.classList.toggle("discard", discards.has(card));
        element.addEventListener("click", () => {
          if (discards.has(card)) discards.delete(card);
          else if (discards.size < (model.toAct?.maxDiscards ?? 0)) discards.add(card);
          draw();
        });
      }
      cards.append(element);
    });
    const seat = h(
      "div",
      {
        class: `seat${mineNow ? " me" : ""}${toAct ? " to-act" : ""}${s.folded ? " folded" : ""}`,
        "data-testid": "seat",
        "data-seat": String(s.seat),
        "data-player": s.playerId,
        "data-stack": s.stack.toString(),
        "data-bet": s.bet.toString(),
        "data-me": String(mineNow),
        "data-to-act": String(toAct),
      },
      h("div", { class: "name" }, s.playerId, mineNow ? " (you)" : ""),
      h("div", { class: "stack" }, money(s.stack)),
      cards,
      h("div", { class: "marks" }, marks(model, s)),
      model.button === s.seat && model.button > 0 ? h("div", { class: "dealer-button", title: "button" }, "D") : null,
    );
    Object.assign(seat.style, place(s.seat, count, mine, 42));
    const out = [seat];
    if (s.bet > 0n) {
      const bet = h(
        "div",
        { class: "bet", "data-testid": "bet", "data-seat": String(s.seat), "data-amount": s.bet.toString() },
        money(s.bet),
      );
      Object.assign(bet.style, place(s.seat, count, mine, 25));
      out.push(bet);
    }
    return out;
  }

  function drawFelt(): void {
    const seats = model.seatList();
    const count = Math.max(model.seatCount, ...seats.map((s) => s.seat), 2);
    const mine = model.mySeat()?.seat ?? 1;
    const center = h(
      "div",
      { class: "center" },
      h("div", { class: "board", "data-testid": "board" }, ...model.board.map((c) => cardElement(c, true))),
      h("div", { class: "pot", "data-testid": "pot", "data-amount": model.pot.toString() }, `Pot ${money(model.pot)}`),
      model.pots.length > 1 ? h("div", { class: "pots", "data-testid": "pots" }, model.potsText()) : null,
    );
    felt.replaceChildren(center, ...seats.flatMap((s) => drawSeat(s, count, mine)));
  }

  function drawActions(): void {
    const la = model.toAct;
    const mine = la !== null && model.myTurn() && !leaving;
    actions.setAttribute("data-my-turn", String(mine));
    if (!mine || la === null) {
      actions.replaceChildren();
      discards.clear();
      turnKey = drawnKey = "";
      return;
    }
    const key = `${turnSequence}`; // a new turn, a new key (data-turn: the driver of the browser test waits on it)
    actions.setAttribute("data-turn", key);
    if (key !== turnKey) {
      turnKey = key;
      box = la.minTo;
      discards.clear();
    }
    // The same turn is not drawn again (another seat's event meanwhile): a button replaced between
    // a press and its release would lose the click.
    const picked = `${key}|${[...discards].join(",")}`;
    if (picked === drawnKey) return;
    drawnKey = picked;
    const offered = choices(la);
    const buttons: HTMLElement[] = [];
    const sized = offered.some((c) => c.sized);
    const fixed = la.maxTo === la.minTo;
    const number = h("input", {
      type: "number",
      "data-testid": "bet-amount",
      min: la.minTo.toString(),
      max: la.maxTo.toString(),
      step: "1",
      value: box.toString(),
    });
    const slider = h("input", {
      type: "range",
      "data-testid": "bet-slider",
      min: la.minTo.toString(),
      max: la.maxTo.toString(),
      step: "1",
      value: box.toString(),
    });
    if (fixed) {
      number.readOnly = true;
      slider.disabled = true;
    }
    const sync = (raw: string): void => {
      let value: bigint;
      try {
        value = BigInt(raw || "0");
      } catch {
        value = la.minTo;
      }
      box = clamp(value, la);
      number.value = box.toString();
      slider.value = box.toString();
    };
    number.addEventListener("change", () => sync(number.value));
    slider.addEventListener("input", () => sync(slider.value));
    for (const choice of offered) {
      let label = choice.label;
      if (choice.action === ActionType.DRAW) label = discards.size ? `Discard ${discards.size}` : "Stand pat";
      else if (choice.sized && fixed) label = `${choice.label} ${money(la.minTo)}`;
      const button = h("button", { type: "button", "data-action": choice.key }, label);
      button.addEventListener("click", () => {
        if (choice.action === ActionType.DRAW) void act(choice.action, 0n, [...discards]);
        else if (choice.sized) {
          sync(number.value);
          void act(choice.action, box);
        } else void act(choice.action);
      });
      buttons.push(button);
    }
    actions.replaceChildren(...buttons);
    if (sized) actions.append(h("label", { class: "amount-box" }, fixed ? "Fixed " : "To ", number, slider));
  }

  /** Add chips: up to the table's maximum buy-in less the stack (and what is queued already). */
  function drawTopUp(mine: SeatState | undefined): void {
    const room = mine && model.maxBuyIn > 0n ? model.maxBuyIn - mine.stack - mine.queuedChips : undefined;
    topUp.hidden = mine === undefined || leaving || (room !== undefined && room <= 0n);
    if (topUp.hidden) {
      topUp.replaceChildren();
      return;
    }
    const key = room === undefined ? "open" : room.toString();
    if (topUp.getAttribute("data-room") === key && topUp.childElementCount > 0) return; // keep what is typed in
    topUp.setAttribute("data-room", key);
    const input = h("input", { type: "number", name: "amount", required: "", min: "1", step: "1" });
    if (room !== undefined) {
      input.max = room.toString();
      input.value = room.toString();
    }
    const limit = room !== undefined ? ` (up to ${money(room)})` : "";
    topUp.replaceChildren(
      h("label", {}, `Add chips${limit} `, input),
      " ",
      h("button", { type: "submit" }, "Add chips"),
    );
  }

  function drawSit(): void {
    const mine = model.mySeat();
    if (tournament) {
      for (const part of [sit, topUp]) {
        part.hidden = true;
        part.replaceChildren();
      }
      return;
    }
    const seated = mine !== undefined;
    sitOut.hidden = !seated;
    postNow.hidden = !(mine?.waitingForBigBlind ?? false) || (mine?.sittingOut ?? false);
    leave.textContent = seated ? "Leave table" : "Back to the lobby";
    drawTopUp(mine);
    if (seated) {
      sitOut.textContent = mine.sittingOut ? "Come back" : "Sit out";
      sit.replaceChildren();
      sit.hidden = true;
      return;
    }
    if (!sit.hidden && sit.childElementCount > 0) return; // keep what is typed in
    sit.hidden = false;
    const low = model.minBuyIn;
    const high = model.maxBuyIn;
    const input = h("input", {
      type: "number",
      name: "buy_in",
      required: "",
      min: low.toString(),
      step: "1",
      value: (high > 0n ? high : low).toString(),
    });
    if (high > 0n) input.max = high.toString();
    const limits = high > 0n ? `${money(low)} – ${money(high)}` : `${money(low)} or more`;
    sit.replaceChildren(
      h("label", {}, `Buy-in (${limits}) `, input),
      " ",
      h(
        "label",
        { title: "a player joining a running game waits for the big blind unless he posts it" },
        h("input", { type: "checkbox", name: "post_now" }),
        " post the big blind now",
      ),
      " ",
      h("button", { type: "submit" }, "Sit down"),
    );
  }

  function draw(): void {
    title.textContent = `${model.tableName || tableId} — ${gameName(model.variant)}  hand #${model.handNumber}`;
    page.setAttribute("data-hand", model.handNumber.toString());
    page.setAttribute("data-in-hand", String(model.inHand));
    drawFelt();
    drawActions();
    drawSit();
    drawTurn();
    last.textContent = model.last;
    results.replaceChildren(...model.results.map((r) => h("li", { "data-pot": String(r.potIndex) }, r.text)));
  }

  function drawTurn(): void {
    const la = model.toAct;
    if (la === null) {
      turn.textContent = model.inHand ? "" : "Waiting for the next hand";
      return;
    }
    const clock = clockText(la, Date.now() / 1000);
    const who = la.playerId === me ? "Your turn" : `To act: ${model.name(la.seat)}`;
    turn.textContent = clock ? `${who} (${clock})` : who;
  }

  sit.addEventListener("submit", (event) => {
    event.preventDefault();
    const input = sit.querySelector("input[name=buy_in]") as HTMLInputElement;
    if (!input.reportValidity()) return;
    const buyIn = BigInt(input.value);
    const postNowBox = sit.querySelector("input[name=post_now]") as HTMLInputElement | null;
    void (async () => {
      try {
        await gateway().join({ tableId, buyIn, postNow: postNowBox?.checked ?? false });
        message.say(`Seated with ${money(buyIn)}.`);
        await refreshBalance();
      } catch (error) {
        message.say(describeError(error), true);
      }
    })();
  });
  topUp.addEventListener("submit", (event) => {
    event.preventDefault();
    const input = topUp.querySelector("input") as HTMLInputElement;
    if (!input.reportValidity()) return;
    const chips = BigInt(input.value);
    void (async () => {
      const reply = await command({ case: "seat", value: { kind: SeatCommand_Kind.ADD_CHIPS, amount: chips } });
      if (reply?.kind.case !== "result") return;
      topUp.removeAttribute("data-room"); // drawn afresh with the room left
      message.say(
        reply.kind.value.queued
          ? `${money(chips)} will be added before the next hand (chips are added between hands only).`
          : `${money(chips)} added.`,
      );
      await refreshBalance();
    })();
  });
  postNow.addEventListener("click", () => {
    void (async () => {
      const reply = await command({ case: "seat", value: { kind: SeatCommand_Kind.POST_NOW } });
      if (reply?.kind.case === "result") message.say("You post the big blind at the next hand.");
    })();
  });
  sitOut.addEventListener("click", () => {
    const kind = model.mySeat()?.sittingOut ? SeatCommand_Kind.COME_BACK : SeatCommand_Kind.SIT_OUT;
    void command({ case: "seat", value: { kind } });
  });
  leave.addEventListener("click", () => {
    if (model.mySeat() === undefined || tournament) return go("#/lobby");
    void (async () => {
      try {
        const reply = await gateway().leave({ tableId });
        if (!reply.pending) return go("#/lobby");
        leaving = true;
        message.say(`You leave when this hand ends (${money(reply.returning)} coming back).`);
        draw();
      } catch (error) {
        message.say(describeError(error), true);
      }
    })();
  });

  const clock = window.setInterval(drawTurn, 500);
  const onHash = (): void => {
    if (window.location.hash === route) return;
    stop.abort();
  };
  window.addEventListener("hashchange", onHash);
  stop.signal.addEventListener("abort", () => {
    window.clearInterval(clock);
    window.removeEventListener("hashchange", onHash);
  });
  try {
    return await watch();
  } finally {
    stop.abort(); // the clock and the listener go with the page
  }

  async function watch(): Promise<TableEnd> {
    void refreshBalance();
    message.say("Opening the table…");
    for (let attempt = 0; !stop.signal.aborted; attempt += 1) {
      try {
        for await (const event of gateway().watchMyTable({ tableId }, { signal: stop.signal })) {
          attempt = 0;
          if (event.kind.case === "session") {
            sessionId = event.kind.value.sessionId;
            model = new TableModel(viewer); // a fresh snapshot follows
            message.say("");
          } else if (event.kind.case === "table") {
            const e = event.kind.value.event;
            if (e.case === "turnStarted") turnSequence = event.kind.value.sequence;
            model.apply(event.kind.value);
            if (e.case === "handFinished") void refreshBalance();
            if (e.case === "seatChanged" && e.value.seat?.playerId === me && e.value.change === "stood_up" && leaving) {
              go("#/lobby");
              return "done";
            }
            draw();
            if (tournament && (e.case === "tableClosed" || (e.case === "seatChanged" && e.value.seat?.playerId === me && GONE.has(e.value.change)))) {
              message.say(e.case === "tableClosed" ? "The table is closed." : `You left this table (${e.value.change}).`);
              return "gone";
            }
          } else if (event.kind.case === "error") message.say(event.kind.value.message, true);
        }
        if (!stop.signal.aborted) message.say(model.closed ? "The table is closed." : "The table's stream ended.");
        return tournament ? "gone" : "done";
      } catch (error) {
        if (stop.signal.aborted) return "done";
        if (isUnauthenticated(error)) {
          session.clear();
          go("#/login");
          return "done";
        }
        const code = ConnectError.from(error).code;
        if (code === Code.NotFound || code === Code.InvalidArgument) {
          message.say(describeError(error), true);
          return tournament ? "gone" : "done";
        }
        message.say(`Connection lost (${describeError(error)}); reconnecting…`, true);
        await new Promise((resolve) => window.setTimeout(resolve, reconnectDelayMs(attempt)));
      }
    }
    return "done";
  }
}
