"""Turning a hand's result into the rake transfer (shared by the gRPC call and the consumer).

No rake rule lives here: how much a hand pays (rake tables, no flop no drop, main pot first) is
decided at the table by the rules core (``cardroom.core.table.rake`` and the engine) and arrives
as ``HandSettled.rake``; the wallet only checks that the settlement balances and books it."""

from __future__ import annotations

from collections.abc import Iterable

from cardroom.v1 import common_pb2, wallet_pb2
from wallet import ledger
from wallet.escrow import HandSettlement, hand_nets
from wallet.ledger import TK, TransferSpec, invalid


def rake_spec(
    hand_id: str, table_id: str, currency: int, rake: int, results: Iterable[wallet_pb2.SeatResult]
) -> TransferSpec | None:
    """The rake transfer of one hand, or None when the rake is 0. Raises INVALID_ARGUMENT."""
    if not hand_id:
        raise invalid("hand_id: required")
    if len(hand_id) > 150:
        raise invalid("hand_id: longer than 150 characters")
    ledger.check_text(hand_id, "hand_id")
    ledger.check_owner(table_id, "table_id")
    if currency == common_pb2.CURRENCY_UNSPECIFIED:
        currency = common_pb2.CURRENCY_CASH
    if currency not in ledger.CURRENCY_SLUG:
        raise invalid(f"currency: unknown value {currency}")
    if rake < 0:
        raise invalid(f"rake: must not be negative, got {rake}")
    results = list(results)
    seats = [r.seat for r in results]
    if len(set(seats)) != len(seats):
        raise invalid("results: a seat appears twice")
    if results and sum(r.net for r in results) + rake != 0:
        raise invalid(
            f"results: the seats' nets sum to {sum(r.net for r in results)}, expected {-rake} (minus the rake)"
        )
    if rake == 0:
        return None
    ledger.check_amount(rake, "rake", maximum=ledger.INT64_MAX, what="the int64 range")
    return TransferSpec(
        from_account=ledger.table_escrow_account(table_id, currency),
        to_account=ledger.house_rake_account(currency),
        amount=rake,
        kind=TK.TRANSFER_KIND_RAKE,
        reference=f"hand:{hand_id}",
        key=ledger.rake_key(hand_id),
    )


def hand_settlement(
    hand_id: str, table_id: str, currency: int, rake: int, results: Iterable[wallet_pb2.SeatResult]
) -> HandSettlement:
    """What a settled hand books, once per hand id: its rake (as :func:`rake_spec`) and every seat's net
    to its player's position in the table escrow (:mod:`wallet.escrow`). The results are required and
    each names its player (INVALID_ARGUMENT otherwise): without them the escrow's positions would no
    longer add up to its balance."""
    results = list(results)
    spec = rake_spec(hand_id, table_id, currency, rake, results)
    if not results:
        raise invalid("results: required (each seat's net moves its player's position in the escrow)")
    if currency == common_pb2.CURRENCY_UNSPECIFIED:
        currency = common_pb2.CURRENCY_CASH
    return HandSettlement(hand_id, ledger.table_escrow_account(table_id, currency), spec, hand_nets(results, currency))
