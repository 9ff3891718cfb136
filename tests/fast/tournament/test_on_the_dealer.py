"""Fast tier: the tournament service's house on the dealer's tables, both in one process — the real
:class:`TournamentHouse` (its store in tmp) driving the real dealer's ``TournamentTables`` over an
in-process gRPC server through :class:`DealerTables`, the dealer's hand results carried back as the
Kafka topic would (its published events, in order), one manual clock for both. Nobody acts: every
hand is played by the dealer's timeout rule, and the core replays it.

rules/000: "Blinds/antes are raised at regular intervals" — a level begins with the next hand dealt;
the hand the core deals and the hand the dealer plays are the same hand, at the same stakes, or the
core cannot replay it and the tournament stops dealing (the sit & go on the dealer that stalled
mid-tournament, issue 15).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

from cardroom.runtime.clock import ManualClock
from cardroom.runtime.events import make_envelope
from cardroom.v1 import tournament_pb2 as pb, tournament_tables_pb2_grpc as tt_grpc
from dealer.deps import Deps
from dealer.service import Tables
from dealer.tournament_service import TournamentTablesService
from dealer.tournament_table import EVENT_TYPE
from tests.fast.dealer.fakes import FakeChecker, FakePublisher, FakeWallet
from tests.fast.inproc import serving
from tests.fast.tournament.conftest import OVERLAY, run_async, sng
from tests.fast.tournament.fakes import FakeBank
from tests.fast.tournament.test_dealer_tables import FakeRecord
from tournament.dealer_tables import DealerTables
from tournament.house import TournamentHouse
from tournament.store import TournamentStore

PLAYERS = [f"p{i}" for i in range(1, 7)]


async def settle(rounds: int = 40) -> None:
    for _ in range(rounds):
        await asyncio.sleep(0)


@run_async
async def test_a_sit_and_go_on_the_dealer_with_short_levels_is_played_to_the_end(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Levels of 5 s whose blinds double, every turn a 1 s timeout, and no tick of the tournament's
    clock (``tick_log_seconds``): every level begins with the deal of a hand, as one does between two
    ticks. Each hand is played on the dealer at the stakes the core dealt it at (the deal carries
    them; its SetTournamentLevel comes after it), every hand replays in the core, and the sit & go
    ends with one player holding every chip. Before the fix the dealer played the hand at the old
    level and the core logged "a dealer's hand ended otherwise in the core"."""
    caplog.set_level(logging.ERROR)
    clock = ManualClock()
    publisher = FakePublisher()
    dealer = Tables(Deps(FakeWallet(), publisher, FakeChecker(), clock=clock))
    topic = dealer.deps.topics.tournament_tables
    async with serving(tt_grpc.add_TournamentTablesServicer_to_server, TournamentTablesService(dealer)) as address:
        port = DealerTables(address, bootstrap=None, tls=None, retry_seconds=0.05)
        bank = FakeBank()
        house = TournamentHouse(
            TournamentStore(tmp_path / "t.sqlite3"),
            bank,
            clock,
            overlay_account=OVERLAY,
            tables=port,
            tick_log_seconds=1e9,
        )
        sender = asyncio.create_task(port.run())

        heard = 0
        played_at: set[int] = set()

        def carry() -> None:
            """The dealer's events to the tournament, as the topic carries them."""
            nonlocal heard
            sent = [p for p in publisher.sent if p.topic == topic]
            for p in sent[heard:]:
                envelope = make_envelope(
                    type=EVENT_TYPE, source="dealer", key=p.key, sequence=p.sequence, payload=p.payload
                )
                port._handle(FakeRecord(p.key.encode(), envelope.SerializeToString()))  # type: ignore[arg-type]
            heard = len(sent)

        try:
            for p in PLAYERS:
                bank.fund(f"player_cash:{p}:cash", 10_000)
            structure = [pb.TournamentLevel(small_blind=5 << n, big_blind=10 << n, seconds=5.0) for n in range(12)]
            await house.create(sng("lv", levels=structure, action_seconds=1, hand_interval_seconds=0.3))
            for p in PLAYERS:
                await house.register("lv", p, f"r-{p}")
            runner = house.runners["lv"]
            for _ in range(6000):
                if runner.finished:
                    break
                await house.step()
                await port.flush()
                await settle()
                carry()
                actor = dealer.actors.get("tt.lv.1")
                if actor is not None and actor.table.in_hand and 1 in runner.t.playing:
                    assert actor.table.hand_number == runner.t.tables[1].hand_number
                    assert actor.table.stakes == runner.t.tables[1].stakes, f"hand {actor.table.hand_number}"
                    played_at.add(actor.table.stakes.big_blind)
                clock.advance(0.1)
                await settle()
            dealt = [e.hand_ended for e in publisher.on(topic) if e.WhichOneof("event") == "hand_ended"]
            errors = [r.getMessage() for r in caplog.records if r.name.startswith("tournament")]
            assert not errors, errors
            assert runner.t.status.name == "FINISHED", f"still {runner.t.status.name} after {len(dealt)} hands"
            assert runner.t.level_index >= 3 and len(played_at) >= 3  # hands were played at several levels
            assert port.refused == 0
            last = dealt[-1]
            assert [s.chips for s in last.ending if s.chips] == [6 * 1500]
            info = runner.results
            assert sorted(r.player for r in info) == sorted(PLAYERS)
        finally:
            sender.cancel()
            await port.close()
            await dealer.stop()
