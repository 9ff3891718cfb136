// A player's picture of one table, folded from the table events of WatchMyTable (the snapshot,
// then the events after it). The same semantics as the terminal client's TableView
// (services/cardroom/client/view.py): tests/web/test_table_fold_contract.py folds the same
// recorded streams with both and compares the tables. Pure: no DOM, no clock, no I/O.
//
// The hand the dealer holds is the truth: after a draw the player's hand is the cards he kept, in
// order, then the cards received; opponents' draws show as a count. Another player's cards are
// "??" until the dealer shows them (HandShown): this fold never invents a card.
import { Currency } from "../gen/cardroom/v1/common_pb.js";
import { ActionType } from "../gen/cardroom/v1/dealer_pb.js";
import type {
  Action,
  HandStarted,
  LegalActionsView,
  PotAwarded,
  PotView,
  SeatChanged,
  SeatView,
  TableEvent,
  TableState,
} from "../gen/cardroom/v1/dealer_pb.js";

export const HIDDEN = "??";

/** Action names as the terminal client writes them (view.py ACTION_NAMES). */
export const ACTION_NAMES: Partial<Record<ActionType, string>> = {
  [ActionType.FOLD]: "fold",
  [ActionType.CHECK]: "check",
  [ActionType.CALL]: "call",
  [ActionType.BET]: "bet",
  [ActionType.RAISE]: "raise",
  [ActionType.BRING_IN]: "bring-in",
  [ActionType.COMPLETE]: "complete",
  [ActionType.DRAW]: "draw",
  [ActionType.ARTIFICIAL_ALL_IN]: "all-in (artificial)",
};
const AMOUNT = new Set([ActionType.BET, ActionType.RAISE, ActionType.COMPLETE, ActionType.BRING_IN]);

/** Seat changes in words (view.py CHANGES). */
export const CHANGES: Record<string, string> = {
  sat_down: "sat down",
  stood_up: "left the table",
  sat_out: "sits out",
  came_back: "is back",
  chips_added: "added chips",
  chips_queued: "adds chips after this hand",
  connected: "reconnected",
  disconnected: "lost the connection",
  post_now: "posts the big blind next hand",
  timed_out_sat_out: "was sat out (timed out / away)",
  absent_stood_up: "was stood up after sitting out",
  chips_refused: "could not add the chips",
};

export interface SeatState {
  seat: number;
  playerId: string;
  stack: bigint;
  bet: bigint; // in front of him in this betting round
  cards: string[]; // "??" for a card he may not see
  up: boolean[]; // per card: dealt face up (Stud)
  inHand: boolean;
  folded: boolean;
  sittingOut: boolean;
  drawn: number | null; // cards replaced in the last draw
  waitingForBigBlind: boolean;
  connected: boolean;
  queuedChips: bigint;
}

/** One pot awarded: the words of view.py's results, and the numbers behind them. */
export interface PotWon {
  potIndex: number;
  share: string;
  amount: bigint;
  winners: { seat: number; amount: bigint; hand: string }[];
  text: string;
}

export class TableModel {
  tableId = "";
  variant = "";
  handNumber = 0n;
  inHand = false;
  board: string[] = [];
  pot = 0n; // every chip in the middle: the pots and the bets in front
  seats = new Map<number, SeatState>();
  toAct: LegalActionsView | null = null;
  last = ""; // one line about the last event
  button = 0;
  results: PotWon[] = []; // the last hand's, one per pot awarded
  shown = new Map<number, string>(); // seat -> hand description at the showdown
  pots: PotView[] = []; // the pots in the middle (the rules core's)
  // the table's settings, from the snapshot (not in TableView: the page needs them)
  tableName = "";
  currency = Currency.UNSPECIFIED;
  seatCount = 0;
  minBuyIn = 0n;
  maxBuyIn = 0n;
  closed = false;

  constructor(readonly me: string) {}

  mySeat(): SeatState | undefined {
    return [...this.seats.values()].find((s) => s.playerId === this.me);
  }

  myTurn(): boolean {
    return this.toAct !== null && this.toAct.playerId === this.me;
  }

  /** Seats in seat order. */
  seatList(): SeatState[] {
    return [...this.seats.values()].sort((a, b) => a.seat - b.seat);
  }

  name(seat: number): string {
    return this.seats.get(seat)?.playerId ?? `seat ${seat}`;
  }

  /** "main pot 150, side pot 1 300 (bob, cat)" (empty: none). */
  potsText(): string {
    return this.pots
      .map((p, i) =>
        i === 0 ? `main pot ${p.amount}` : `side pot ${i} ${p.amount} (${p.members.map((m) => this.name(m)).join(", ")})`,
      )
      .join(", ");
  }

  apply(event: TableEvent): void {
    const e = event.event;
    switch (e.case) {
      case "snapshot":
        return this.onSnapshot(e.value);
      case "handStarted":
        return this.onHandStarted(e.value);
      case "forcedBet": {
        const s = this.seats.get(e.value.seat);
        if (s) {
          s.stack -= e.value.amount;
          if (e.value.kind !== "ante") s.bet += e.value.amount; // antes go to the pot
        }
        this.pot += e.value.amount;
        this.last = `${this.name(e.value.seat)} posts ${e.value.kind.replaceAll("_", " ")} ${e.value.amount}`;
        return;
      }
      case "cardsDealt": {
        const s = this.seats.get(e.value.seat);
        if (s) {
          s.cards.push(...e.value.cards);
          s.up.push(...e.value.cards.map(() => e.value.faceUp));
        }
        return;
      }
      case "boardDealt":
        this.board.push(...e.value.cards);
        this.last = `board: ${this.board.join(" ")}`;
        return;
      case "streetStarted":
        if (e.value.index > 0) for (const s of this.seats.values()) s.bet = 0n;
        return;
      case "action":
        return this.onAction(e.value);
      case "turnStarted":
        this.toAct = e.value.toAct ?? null;
        return;
      case "potsChanged":
        this.pots = [...e.value.pots];
        if (this.pots.length > 1) this.last = this.potsText();
        return;
      case "betReturned": {
        const s = this.seats.get(e.value.seat);
        if (s) s.stack += e.value.amount;
        this.pot -= e.value.amount;
        return;
      }
      case "handShown": {
        const s = this.seats.get(e.value.seat);
        if (s) {
          s.cards = [...e.value.cards];
          s.up = s.cards.map(() => true);
        }
        if (e.value.description) this.shown.set(e.value.seat, e.value.description);
        this.last = `${this.name(e.value.seat)} shows ${e.value.cards.join(" ")} ${e.value.description}`.trimEnd();
        return;
      }
      case "potAwarded":
        return this.onPotAwarded(e.value);
      case "handFinished":
        this.inHand = false;
        this.toAct = null;
        this.pot = 0n;
        this.pots = [];
        for (const s of this.seats.values()) s.bet = 0n;
        return;
      case "restored":
        this.last =
          "the dealer restarted: " +
          (e.value.handCancelled
            ? "the hand in progress is cancelled, every chip back as before the deal"
            : "the table goes on");
        return;
      case "seatChanged":
        return this.onSeatChanged(e.value);
      case "tableClosed":
        this.closed = true;
        this.last = `the table closed${e.value.reason ? `: ${e.value.reason}` : ""}`;
        return;
      default:
        return; // hand_mucked: nothing is shown
    }
  }

  private seatFrom(v: SeatView): SeatState {
    return {
      seat: v.seat,
      playerId: v.playerId,
      stack: v.stack,
      bet: v.bet,
      cards: [...v.cards],
      up: v.up.length === v.cards.length ? [...v.up] : v.cards.map(() => false),
      inHand: v.inHand,
      folded: v.folded,
      sittingOut: v.sittingOut,
      drawn: null,
      waitingForBigBlind: v.waitingForBigBlind,
      connected: v.connected,
      queuedChips: v.queuedChips,
    };
  }

  private onSnapshot(s: TableState): void {
    this.tableId = s.info?.tableId ?? "";
    this.variant = s.info?.config?.variant ?? "";
    this.tableName = s.info?.config?.name ?? "";
    this.currency = s.info?.config?.currency ?? Currency.UNSPECIFIED;
    this.seatCount = s.info?.config?.seats ?? 0;
    this.minBuyIn = s.info?.minBuyIn ?? 0n;
    this.maxBuyIn = s.info?.maxBuyIn ?? 0n;
    this.closed = s.info?.closed ?? false;
    this.handNumber = s.handNumber;
    this.inHand = s.inHand;
    this.pot = s.pot;
    this.board = [...s.board];
    this.seats = new Map(s.seats.map((v) => [v.seat, this.seatFrom(v)]));
    this.toAct = s.toAct && s.toAct.playerId ? s.toAct : null;
    this.button = s.button;
    this.pots = [...s.pots];
  }

  private onHandStarted(e: HandStarted): void {
    this.handNumber = e.handNumber;
    this.inHand = true;
    this.board = [];
    this.pot = 0n;
    this.toAct = null;
    this.button = e.button;
    this.results = [];
    this.shown = new Map();
    this.pots = [];
    for (const s of this.seats.values()) {
      s.cards = [];
      s.up = [];
      s.bet = 0n;
      s.inHand = false;
      s.folded = false;
      s.drawn = null;
    }
    for (const v of e.seats) {
      let seat = this.seats.get(v.seat);
      if (!seat) {
        seat = this.seatFrom(v);
        this.seats.set(v.seat, seat);
      }
      seat.playerId = v.playerId;
      seat.stack = v.stack;
      seat.inHand = true;
      seat.waitingForBigBlind = false;
      seat.sittingOut = false;
    }
    this.last = `hand #${e.handNumber} starts`;
  }

  private onAction(e: Action): void {
    const s = this.seats.get(e.seat);
    if (s) {
      s.stack -= e.added;
      if (e.action !== ActionType.FOLD) s.bet = e.to;
      else {
        s.folded = true;
        s.inHand = false;
      }
      if (e.action === ActionType.DRAW) drew(s, e);
    }
    this.pot += e.added;
    this.toAct = null;
    let amount = AMOUNT.has(e.action) ? ` ${e.to}` : "";
    if (e.action === ActionType.DRAW) amount = e.discarded ? ` ${e.discarded}` : " (stands pat)";
    const artificial = e.action === ActionType.ARTIFICIAL_ALL_IN;
    let extra = e.allIn && !artificial ? " (all-in)" : "";
    extra += e.timeout ? " (timeout)" : "";
    this.last = `${this.name(e.seat)} ${ACTION_NAMES[e.action] ?? "?"}${amount}${extra}`;
  }

  private onPotAwarded(e: PotAwarded): void {
    for (const w of e.winners) {
      const s = this.seats.get(w.seat);
      if (s) s.stack += w.amount;
    }
    const pot = e.potIndex === 0 ? "main pot" : `side pot ${e.potIndex}`;
    const share = e.share === "" || e.share === "all" ? "" : ` (${e.share} half)`;
    const names = e.winners
      .map((w) => {
        const hand = this.shown.get(w.seat);
        return `${this.name(w.seat)} wins ${w.amount}` + (hand !== undefined ? ` with ${hand}` : "");
      })
      .join(", ");
    this.last = `${pot}${share} ${e.amount}: ${names}`;
    this.results.push({
      potIndex: e.potIndex,
      share: e.share,
      amount: e.amount,
      winners: e.winners.map((w) => ({ seat: w.seat, amount: w.amount, hand: this.shown.get(w.seat) ?? "" })),
      text: this.last,
    });
  }

  private onSeatChanged(e: SeatChanged): void {
    const v = e.seat;
    if (!v) return;
    if (e.change === "stood_up" || e.change === "absent_stood_up") this.seats.delete(v.seat);
    else {
      const fresh = this.seatFrom(v);
      const old = this.seats.get(v.seat);
      if (
        old !== undefined &&
        old.playerId === fresh.playerId &&
        (fresh.cards.length === 0 ||
          (fresh.cards.every((c) => c === HIDDEN) && old.cards.length === fresh.cards.length))
      ) {
        fresh.cards = old.cards; // keep what we knew
        fresh.up = old.up;
        fresh.drawn = old.drawn;
      }
      this.seats.set(v.seat, fresh);
    }
    this.last = `${v.playerId} ${CHANGES[e.change] ?? e.change.replaceAll("_", " ")}`;
  }
}

/** The engine's hand after a draw: the kept cards in order, then those received. */
function drew(s: SeatState, e: Action): void {
  s.drawn = e.discarded;
  let kept: string[];
  if (e.discards.length > 0 || e.discarded === 0) {
    // our own draw, or standing pat: we know which cards went
    const gone = [...e.discards];
    kept = [];
    for (const card of s.cards) {
      const i = gone.indexOf(card);
      if (i >= 0) gone.splice(i, 1);
      else kept.push(card);
    }
  } else kept = Array.from({ length: Math.max(0, s.cards.length - e.discarded) }, () => HIDDEN);
  s.cards = [...kept, ...e.received];
  s.up = s.cards.map(() => false);
}

/** Folds a whole stream: the model after every event in order. */
export function fold(me: string, events: Iterable<TableEvent>): TableModel {
  const model = new TableModel(me);
  for (const event of events) model.apply(event);
  return model;
}
