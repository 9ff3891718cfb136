"""Per-player positions inside a table escrow (issue 14 item 7), the rules with no storage.

"Every escrow left without a seat after recovery is reconciled back to its owner automatically": to
know whose chips an escrow holds, the wallet keeps, per table escrow, each player account's
*position*:

* a buy-in into an escrow credits the buying player's position, a cash-out debits it
  (:meth:`EscrowPositions.apply_transfer`, in the transfer's transaction);
* a settled hand adds each seat's net to its player's position (:meth:`EscrowPositions.apply_hand`,
  in the transaction that posts the hand's rake, once per hand id). The rake is what the nets leave
  out (``sum(net) + rake == 0``), so the positions drop by exactly the rake the escrow pays.

Invariant: **an escrow's balance equals the sum of its positions** (every store keeps it in each
transaction). A single position may be *negative for a while*: hand results arrive over Kafka after
the dealer has settled the hand, so a winner's cash-out can be booked before the hand that made him
win; the position comes right when the hand is applied. A reconciliation therefore refuses an escrow
with a negative position (FAILED_PRECONDITION: "retry once the hands are applied"), and the dealer
can name the last hand it settled at the table (``settled_hand_id``) so that the wallet refuses to
pay back from positions that are missing a hand.

:func:`reconcile_plan` is the cash-outs that pay back every position of a player no longer seated.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field

from cardroom.core import ids
from cardroom.v1 import common_pb2, wallet_pb2
from wallet import ledger
from wallet.ledger import TK, ErrorKind, LedgerError, TransferSpec, invalid

#: Longest ``request_id`` of a reconciliation (its transfers' keys are ``reconcile:<id>:<account>``).
REQUEST_ID_MAX = 100
#: Idempotency keys of the cash-outs a reconciliation makes start with this (a buy-in replayed after
#: such a pay-back is refused: ``wallet.store_api.paid_back``).
RECONCILE_KEY_PREFIX = "reconcile:"
#: Why a store flags an escrow whose history predates positions (see ``wallet.store_sql``).
PREDATES_POSITIONS = "the escrow holds chips booked before the wallet kept positions"


def _out_of_range(account: str, escrow: str) -> LedgerError:
    return LedgerError(ErrorKind.OUT_OF_RANGE, f"position of {account!r} in {escrow!r} would leave the int64 range")


@dataclass
class EscrowPositions:
    """Player account id -> chips of that player inside one table escrow (zero positions are dropped)."""

    escrow: str
    positions: dict[str, int] = field(default_factory=dict)

    def total(self) -> int:
        return sum(self.positions.values())

    def apply_transfer(self, spec: TransferSpec) -> None:
        """A buy-in into this escrow credits the payer; a cash-out from it debits the payee."""
        delta = position_change(spec)
        if delta is not None and delta[0] == self.escrow:
            self.apply_hand([(delta[1], delta[2])])

    def apply_hand(self, nets: Iterable[tuple[str, int]]) -> None:
        """Each ``(player account, net)`` of a settled hand; all or nothing (OUT_OF_RANGE past int64)."""
        after = dict(self.positions)
        for account, net in nets:
            after[account] = after.get(account, 0) + net
            if not -ledger.INT64_MAX <= after[account] <= ledger.INT64_MAX:
                raise _out_of_range(account, self.escrow)
        self.positions = {a: v for a, v in after.items() if v != 0}

    def negative(self) -> list[str]:
        return sorted(a for a, v in self.positions.items() if v < 0)


def position_change(spec: TransferSpec) -> tuple[str, str, int] | None:
    """``(escrow, player account, delta)`` a transfer makes to a position, None when it makes none."""
    if spec.kind == TK.TRANSFER_KIND_BUY_IN:
        return spec.to_account, spec.from_account, spec.amount
    if spec.kind == TK.TRANSFER_KIND_CASH_OUT:
        return spec.from_account, spec.to_account, -spec.amount
    return None


def player_account(player_id: str, currency: int, field: str = "player_id") -> str:
    """The account a player's escrow position belongs to (cash or play by the table's currency), by
    :func:`cardroom.core.ids.player_account_id`; a bad player id is INVALID_ARGUMENT naming ``field``."""
    try:
        ids.verify_player_id(player_id, field)
    except ids.InvalidId as exc:
        raise invalid(str(exc)) from None
    return ids.player_account_id(player_id, ids.Currency(ledger.CURRENCY_SLUG[currency]))


@dataclass(frozen=True)
class HandSettlement:
    """What a settled hand does to one escrow: its rake transfer (None when 0) and each player's net."""

    hand_id: str
    escrow: str
    rake: TransferSpec | None
    nets: tuple[tuple[str, int], ...]

    @property
    def table_id(self) -> str:
        """The table whose escrow this is (the owner of the escrow account)."""
        return ledger.parse_account_id(self.escrow, "table_id")[1]


def hand_nets(results: Iterable[wallet_pb2.SeatResult], currency: int) -> tuple[tuple[str, int], ...]:
    """``(player account, net)`` per seat; every seat must name its player (INVALID_ARGUMENT)."""
    nets: dict[str, int] = {}
    for result in results:
        if not result.player_id:
            raise invalid(f"results: seat {result.seat} has no player_id (its net moves that player's position)")
        account = player_account(result.player_id, currency, "results.player_id")
        if account in nets:
            raise invalid(f"results: player {result.player_id!r} appears twice")
        nets[account] = result.net
    return tuple(sorted(nets.items()))


@dataclass(frozen=True)
class ReconcileRequest:
    """A validated ReconcileEscrow request: pay back every position of ``escrow`` not in ``seated``."""

    request_id: str
    escrow: str
    seated: tuple[str, ...]  # player accounts whose positions stay (sorted, unique)
    settled_hand_id: str = ""

    def fingerprint(self) -> str:
        """What a replay of ``request_id`` must repeat to be the same request."""
        return ",".join(self.seated) + "|" + self.settled_hand_id


def reconcile_request(
    request_id: str, escrow: str, seated_players: Iterable[str], settled_hand_id: str = ""
) -> ReconcileRequest:
    """Shape checks that need no storage: INVALID_ARGUMENT for a missing or bad request id, an account
    that is not a table escrow, a bad player id or hand id of another table."""
    ledger.check_key(request_id, "request_id")
    if len(request_id) > REQUEST_ID_MAX:
        raise invalid(f"request_id: longer than {REQUEST_ID_MAX} characters")
    try:
        parsed = ids.parse_account_id(escrow, "escrow_account")
    except ids.InvalidId as exc:
        raise invalid(str(exc)) from None
    if parsed.kind is not ids.AccountKind.TABLE_ESCROW:
        raise invalid(f"escrow_account: {escrow!r} is a {parsed.kind.value} account, not a table escrow")
    currency = ledger.SLUG_CURRENCY[parsed.currency.value]
    seated = sorted({player_account(p, currency, "seated_player_ids") for p in seated_players})
    if settled_hand_id:
        ledger.check_text(settled_hand_id, "settled_hand_id")
        try:
            hand = ids.parse_hand_id(settled_hand_id, "settled_hand_id")
        except ids.InvalidId as exc:
            raise invalid(str(exc)) from None
        if hand.table_id != parsed.owner:
            raise invalid(f"settled_hand_id: {settled_hand_id!r} is not a hand of table {parsed.owner!r}")
    return ReconcileRequest(request_id, escrow, tuple(seated), settled_hand_id)


def escrow_of(table_id: str, currency: int) -> str:
    """The escrow account of a table (``currency`` unspecified: CASH), INVALID_ARGUMENT for a bad id."""
    if currency == common_pb2.CURRENCY_UNSPECIFIED:
        currency = common_pb2.CURRENCY_CASH
    if currency not in ledger.CURRENCY_SLUG:
        raise invalid(f"currency: unknown value {currency}")
    try:
        return ids.escrow_account_id(table_id, ids.Currency(ledger.CURRENCY_SLUG[currency]))
    except ids.InvalidId as exc:
        raise invalid(str(exc)) from None


def reconcile_plan(
    positions: EscrowPositions, balance: int, request_id: str, seated: Collection[str] = ()
) -> list[TransferSpec]:
    """The cash-outs that pay back every position whose account is not in ``seated`` (all of them when
    nobody is seated, leaving the escrow at exactly 0). FAILED_PRECONDITION when the positions do not
    add up to the balance or one is negative (a hand not applied yet). Keys derive from ``request_id``."""
    if positions.total() != balance:
        raise LedgerError(
            ErrorKind.PRECONDITION,
            f"escrow_account: positions of {positions.escrow!r} add up to {positions.total()}, "
            f"the balance is {balance}",
        )
    negative = positions.negative()
    if negative:
        raise LedgerError(
            ErrorKind.PRECONDITION,
            f"escrow_account: the position of {negative[0]!r} in {positions.escrow!r} is negative "
            "(a settled hand is not applied yet); retry",
        )
    return [
        TransferSpec(
            from_account=positions.escrow,
            to_account=account,
            amount=amount,
            kind=TK.TRANSFER_KIND_CASH_OUT,
            reference=f"reconcile:{request_id}",
            key=f"{RECONCILE_KEY_PREFIX}{request_id}:{account}",
        )
        for account, amount in sorted(positions.positions.items())
        if account not in seated
    ]
