"""A finished hand as what the dealer publishes: the full hand record and the settlement."""

from __future__ import annotations

import logging
from typing import cast

from cardroom.core.engine import Hand
from cardroom.core.table import HandRecord
from cardroom.runtime.timestamps import timestamp
from cardroom.v1 import common_pb2, dealer_pb2, events_pb2, wallet_pb2

log = logging.getLogger("dealer.settlement")


def settlement(
    record: HandRecord, hand: Hand, table_id: str, hand_id: str, currency: int, seed: bytes, commitment: str, now: float
) -> tuple[dealer_pb2.HandRecordPublished, events_pb2.HandSettled]:
    """The PHH record (with ``_hand_id``, ``_table_id``, the revealed ``_seed`` and its
    ``_commitment``) and the hand-settled event the wallet consumes (sum of nets + rake = 0)."""
    phh = record.phh(_hand_id=hand_id, _table_id=table_id, _seed=seed.hex(), _commitment=commitment)
    players = dict(zip(hand.seats, hand.players, strict=True))
    nets = {s: record.finishing_stacks[s] - record.starting_stacks[s] for s in record.starting_stacks}
    settled = events_pb2.HandSettled(
        hand_id=hand_id,
        table_id=table_id,
        # cast only: a proto enum value is a plain int at runtime; ``currency`` is the table's Currency
        currency=cast(common_pb2.Currency, currency),
        rake=record.rake,
        results=[wallet_pb2.SeatResult(seat=s, player_id=players[s], net=n) for s, n in sorted(nets.items())],
    )
    settled.settled_at.CopyFrom(timestamp(now))
    if sum(nets.values()) + record.rake != 0:  # never expected: the engine conserves chips
        log.error("hand results do not balance", extra={"hand_id": hand_id, "nets": nets, "rake": record.rake})
    published = dealer_pb2.HandRecordPublished(hand_id=hand_id, table_id=table_id, hand_number=record.number, phh=phh)
    return published, settled
