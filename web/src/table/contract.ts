// The table a fold ends at, as plain JSON of the fields the Python TableView has too: what the
// cross-language contract test (tests/web/test_table_fold_contract.py) compares, event by event.
// Used by web/scripts/fold.mjs; the Python side writes the same shape from TableView.
import { fromBinary } from "@bufbuild/protobuf";
import { PlayEventSchema } from "../gen/cardroom/v1/gateway_pb.js";
import type { LegalActionsView } from "../gen/cardroom/v1/dealer_pb.js";
import { TableModel } from "./fold.js";

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

function legal(la: LegalActionsView | null): Json {
  if (la === null) return null;
  return {
    seat: la.seat,
    player_id: la.playerId,
    actions: la.actions.map((a) => a as number),
    call_amount: Number(la.callAmount),
    min_to: Number(la.minTo),
    max_to: Number(la.maxTo),
    max_discards: la.maxDiscards,
    bring_in: Number(la.bringIn),
    time_bank_seconds: la.timeBankSeconds,
    time_bank_running: la.timeBankRunning,
    deadline: la.deadline ? `${la.deadline.seconds}.${la.deadline.nanos}` : null,
  };
}

export function normalise(model: TableModel): Json {
  return {
    table_id: model.tableId,
    variant: model.variant,
    hand_number: Number(model.handNumber),
    in_hand: model.inHand,
    board: [...model.board],
    pot: Number(model.pot),
    button: model.button,
    seats: model.seatList().map((s) => ({
      seat: s.seat,
      player_id: s.playerId,
      stack: Number(s.stack),
      bet: Number(s.bet),
      cards: [...s.cards],
      up: [...s.up],
      in_hand: s.inHand,
      folded: s.folded,
      sitting_out: s.sittingOut,
      drawn: s.drawn,
      waiting_for_big_blind: s.waitingForBigBlind,
      connected: s.connected,
      queued_chips: Number(s.queuedChips),
    })),
    to_act: legal(model.toAct),
    pots: model.pots.map((p) => ({ amount: Number(p.amount), members: [...p.members] })),
    results: model.results.map((r) => r.text),
    shown: [...model.shown.entries()].sort(([a], [b]) => a - b).map(([seat, hand]) => [seat, hand]),
  };
}

function bytes(base64: string): Uint8Array {
  const raw = atob(base64);
  return Uint8Array.from(raw, (c) => c.charCodeAt(0));
}

/** PlayEvents (base64 of their binary form, one per line) folded for `me`: the table after each
 * table event, in order. The other kinds (session, result, pong) leave the table as it is. */
export function foldLines(me: string, lines: string[]): Json[] {
  const model = new TableModel(me);
  const tables: Json[] = [];
  for (const line of lines) {
    if (!line.trim()) continue;
    const event = fromBinary(PlayEventSchema, bytes(line.trim()));
    if (event.kind.case !== "table") continue;
    model.apply(event.kind.value);
    tables.push(normalise(model));
  }
  return tables;
}
