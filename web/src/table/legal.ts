// The buttons a turn offers: the legal actions only, with the amounts the dealer allows (pure:
// the page draws them). BET / RAISE / COMPLETE take a "to" amount between min_to and max_to
// (limit games: min_to = max_to, the fixed amount); BRING_IN its amount; DRAW up to max_discards.
import { ActionType } from "../gen/cardroom/v1/dealer_pb.js";
import type { LegalActionsView } from "../gen/cardroom/v1/dealer_pb.js";

export interface Choice {
  action: ActionType;
  label: string; // "Fold", "Call 10", "Raise to", ...
  key: string; // data-action: fold, check, call, bet, raise, bring-in, complete, draw
  sized: boolean; // takes the amount of the bet box
  amount: bigint; // the fixed amount (call, bring-in) or the box's starting value
}

const ORDER = [
  ActionType.FOLD,
  ActionType.CHECK,
  ActionType.CALL,
  ActionType.BRING_IN,
  ActionType.COMPLETE,
  ActionType.BET,
  ActionType.RAISE,
  ActionType.DRAW,
];

export function choices(la: LegalActionsView): Choice[] {
  const legal = new Set(la.actions);
  const out: Choice[] = [];
  for (const action of ORDER) {
    if (!legal.has(action)) continue;
    switch (action) {
      case ActionType.FOLD:
        out.push({ action, label: "Fold", key: "fold", sized: false, amount: 0n });
        break;
      case ActionType.CHECK:
        out.push({ action, label: "Check", key: "check", sized: false, amount: 0n });
        break;
      case ActionType.CALL:
        out.push({ action, label: `Call ${la.callAmount}`, key: "call", sized: false, amount: la.callAmount });
        break;
      case ActionType.BRING_IN:
        out.push({ action, label: `Bring in ${la.bringIn}`, key: "bring-in", sized: false, amount: la.bringIn });
        break;
      case ActionType.COMPLETE:
        out.push({ action, label: "Complete to", key: "complete", sized: true, amount: la.minTo });
        break;
      case ActionType.BET:
        out.push({ action, label: "Bet", key: "bet", sized: true, amount: la.minTo });
        break;
      case ActionType.RAISE:
        out.push({ action, label: "Raise to", key: "raise", sized: true, amount: la.minTo });
        break;
      case ActionType.DRAW:
        out.push({ action, label: "Draw", key: "draw", sized: false, amount: 0n });
        break;
    }
  }
  return out;
}

/** The box's amount kept within the legal bounds (a typed 5 against a min of 20 is 20). */
export function clamp(value: bigint, la: LegalActionsView): bigint {
  if (value < la.minTo) return la.minTo;
  if (la.maxTo > 0n && value > la.maxTo) return la.maxTo;
  return value;
}
