"""What the end-to-end test reads back: hand records and settlements from Kafka, the bots'
recorded Play streams, and the hole-card leak check over them."""

from __future__ import annotations

import base64
import tomllib
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from cardroom.runtime.events import decode_envelope, unpack
from cardroom.v1 import dealer_pb2 as d, events_pb2, gateway_pb2 as g
from tests.kafka_read import records_so_far


def read_topic(bootstrap: str, topic: str, linger: float = 2.0) -> list[events_pb2.EventEnvelope]:
    """Every envelope on ``topic`` from the beginning, then until ``linger`` seconds pass without one."""
    return [decode_envelope(record.value) for record in records_so_far(bootstrap, topic, linger=linger)]


@dataclass
class HandRecord:
    hand_id: str
    table_id: str
    phh: str
    fields: dict

    @property
    def nets(self) -> dict[str, int]:
        f = self.fields
        # strict=False: the three lists come from the PHH file as written, not equal by construction here
        players, starts, ends = f["players"], f["starting_stacks"], f["finishing_stacks"]
        return {p: end - start for p, start, end in zip(players, starts, ends, strict=False)}


def hand_records(envelopes: list[events_pb2.EventEnvelope]) -> tuple[list[HandRecord], dict[str, int]]:
    """The records (one per distinct event id) and how many Kafka messages each hand id had."""
    seen: set[str] = set()
    messages: dict[str, int] = defaultdict(int)
    records = []
    for env in envelopes:
        msg = unpack(env, d.HandRecordPublished)
        if msg is None:
            continue
        messages[msg.hand_id] += 1
        if env.event_id in seen:
            continue
        seen.add(env.event_id)
        records.append(HandRecord(msg.hand_id, msg.table_id, msg.phh, tomllib.loads(msg.phh)))
    return records, dict(messages)


def settlements(envelopes: list[events_pb2.EventEnvelope]) -> dict[str, events_pb2.HandSettled]:
    found: dict[str, events_pb2.HandSettled] = {}
    for env in envelopes:
        msg = unpack(env, events_pb2.HandSettled)
        if msg is not None:
            found.setdefault(msg.hand_id, msg)
    return found


def read_streams(path: Path) -> dict[str, list[g.PlayEvent]]:
    """The bots' recorded Play events per player, in arrival order."""
    streams: dict[str, list[g.PlayEvent]] = defaultdict(list)
    for line in path.read_text().splitlines():
        player, _, data = line.partition("\t")
        event = g.PlayEvent()
        event.ParseFromString(base64.b64decode(data))
        streams[player].append(event)
    return dict(streams)


@dataclass
class LeakReport:
    hands_checked: int = 0
    down_cards_seen: int = 0
    leaks: list[str] = field(default_factory=list)


def _seat_of(events: list[d.TableEvent], player: str) -> int | None:
    for e in events:
        if e.WhichOneof("event") == "hand_started":
            for s in e.hand_started.seats:
                if s.player_id == player:
                    return s.seat
    return None


def hole_card_leaks(streams: dict[str, list[g.PlayEvent]]) -> LeakReport:
    """No viewer saw a card dealt face down to another seat before that seat showed it.

    The face-down cards of (table, hand, seat) are learned from the owner's own stream; every
    other viewer's events of that hand before the seat's HandShown must not contain them."""
    by_viewer: dict[str, dict[tuple[str, int], list[d.TableEvent]]] = {}
    for player, events in streams.items():
        hands: dict[tuple[str, int], list[d.TableEvent]] = defaultdict(list)
        for event in events:
            if event.WhichOneof("kind") == "table":
                hands[(event.table.table_id, event.table.hand_number)].append(event.table)
        by_viewer[player] = hands
    down: dict[tuple[str, int, int], set[str]] = defaultdict(set)
    for player, hands in by_viewer.items():
        for key, events in hands.items():
            seat = _seat_of(events, player)
            for e in events:
                if e.WhichOneof("event") == "cards_dealt" and e.cards_dealt.seat == seat and not e.cards_dealt.face_up:
                    down[(*key, seat)].update(c for c in e.cards_dealt.cards if c != "??")
    report = LeakReport(down_cards_seen=sum(len(v) for v in down.values()))
    for viewer, hands in by_viewer.items():
        for key, events in hands.items():
            report.hands_checked += 1
            shown: set[int] = set()
            for e in events:
                what = e.WhichOneof("event")
                if what == "hand_shown":
                    shown.add(e.hand_shown.seat)
                    continue
                if what in ("hand_finished", "pot_awarded"):
                    break
                seen: list[tuple[int, str]] = []
                if what == "cards_dealt":
                    seen = [(e.cards_dealt.seat, c) for c in e.cards_dealt.cards]
                elif what == "snapshot":
                    seen = [(s.seat, c) for s in e.snapshot.seats for c in s.cards]
                elif what == "action":
                    seen = [(e.action.seat, c) for c in e.action.received]
                for seat, card in seen:
                    if seat in shown or card == "??":
                        continue
                    if card in down.get((*key, seat), ()) and _seat_of(events, viewer) != seat:
                        report.leaks.append(f"{viewer} saw {card} of seat {seat} in {key} ({what})")
    return report
