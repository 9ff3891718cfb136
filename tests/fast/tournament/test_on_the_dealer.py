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
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from cardroom.runtime.clock import ManualClock
from cardroom.runtime.events import make_envelope
from cardroom.v1 import tournament_pb2 as pb, tournament_tables_pb2 as tt, tournament_tables_pb2_grpc as tt_grpc
from dealer.deps import Deps
from dealer.service import Tables
from dealer.tournament_service import TournamentTablesService
from dealer.tournament_table import EVENT_TYPE, TournamentTableActor
from tests.fast.dealer.fakes import FakeChecker, FakePublisher, FakeWallet
from tests.fast.inproc import serving
from tests.fast.tournament.conftest import OVERLAY, run_async, sng
from tests.fast.tournament.fakes import FakeBank
from tests.fast.tournament.test_dealer_tables import FakeRecord
from tournament.dealer_tables import DealerTables
from tournament.house import TournamentHouse
from tournament.runner import Runner
from tournament.store import TournamentStore


async def settle(rounds: int = 40) -> None:
    for _ in range(rounds):
        await asyncio.sleep(0)


@dataclass
class Both:
    """The house and the dealer it plays on, stepped together by :meth:`play`."""

    house: TournamentHouse
    dealer: Tables
    port: DealerTables
    publisher: FakePublisher
    clock: ManualClock
    bank: FakeBank
    heard: int = 0
    checks: list[tuple[int, int]] = field(default_factory=list)

    @property
    def topic(self) -> str:
        return self.dealer.deps.topics.tournament_tables

    def carry(self) -> None:
        """The dealer's events to the tournament, as the topic carries them."""
        sent = [p for p in self.publisher.sent if p.topic == self.topic]
        for p in sent[self.heard :]:
            envelope = make_envelope(
                type=EVENT_TYPE, source="dealer", key=p.key, sequence=p.sequence, payload=p.payload
            )
            self.port._handle(FakeRecord(p.key.encode(), envelope.SerializeToString()))  # type: ignore[arg-type]
        self.heard = len(sent)

    def actors(self, tid: str) -> dict[int, TournamentTableActor]:
        return {
            a.number: a
            for a in self.dealer.actors.values()
            if isinstance(a, TournamentTableActor) and a.tournament_id == tid
        }

    def hands(self) -> list[tt.TournamentHandEnded]:
        return [e.hand_ended for e in self.publisher.on(self.topic) if e.WhichOneof("event") == "hand_ended"]

    async def enter(self, request: pb.CreateTournamentRequest, players: list[str]) -> Runner:
        await self.house.create(request)
        for p in players:
            self.bank.fund(f"player_cash:{p}:cash", 10_000)
            await self.house.register(request.tournament_id, p, f"r-{p}")
        return self.house.runners[request.tournament_id]

    async def play(self, runner: Runner, steps: int = 6000, step: float = 0.1) -> None:
        """Step both until the tournament ends; at every step, a hand the dealer plays is the
        core's hand at the core's stakes."""
        for _ in range(steps):
            if runner.finished:
                return
            await self.house.step()
            await self.port.flush()
            await settle()
            self.carry()
            for number, actor in self.actors(runner.tournament_id).items():
                if actor.table.in_hand and number in runner.t.playing:
                    core = runner.t.tables[number]
                    assert actor.table.hand_number == core.hand_number
                    assert actor.table.stakes == core.stakes, f"table {number} hand {core.hand_number}"
                    self.checks.append((number, core.stakes.big_blind))
            self.clock.advance(step)
            await settle()


@asynccontextmanager
async def both(tmp_path: Path) -> AsyncIterator[Both]:
    clock = ManualClock()
    publisher = FakePublisher()
    dealer = Tables(Deps(FakeWallet(), publisher, FakeChecker(), clock=clock))
    async with serving(tt_grpc.add_TournamentTablesServicer_to_server, TournamentTablesService(dealer)) as address:
        port = DealerTables(address, bootstrap=None, tls=None, retry_seconds=0.05)
        bank = FakeBank()
        # no tick of the tournament's clock: every level begins with a deal (or an action), as one
        # does between two ticks
        house = TournamentHouse(
            TournamentStore(tmp_path / "t.sqlite3"),
            bank,
            clock,
            overlay_account=OVERLAY,
            tables=port,
            tick_log_seconds=1e9,
        )
        sender = asyncio.create_task(port.run())
        try:
            yield Both(house, dealer, port, publisher, clock, bank)
        finally:
            sender.cancel()
            await port.close()
            await dealer.stop()


def no_errors(caplog: pytest.LogCaptureFixture) -> None:
    errors = [r.getMessage() for r in caplog.records if r.name.startswith("tournament") and r.levelno >= logging.ERROR]
    assert not errors, errors


@run_async
async def test_a_sit_and_go_on_the_dealer_with_short_levels_is_played_to_the_end(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Levels of 5 s whose blinds double, every turn a 1 s timeout: every level begins with the deal
    of a hand. Each hand is played on the dealer at the stakes the core dealt it at (the deal carries
    them; its SetTournamentLevel comes after it), every hand replays in the core, and the sit & go
    ends with one player holding every chip. Before the fix the dealer played the hand at the old
    level and the core logged "a dealer's hand ended otherwise in the core"."""
    caplog.set_level(logging.ERROR)
    players = [f"p{i}" for i in range(1, 7)]
    async with both(tmp_path) as room:
        structure = [pb.TournamentLevel(small_blind=5 << n, big_blind=10 << n, seconds=5.0) for n in range(12)]
        runner = await room.enter(sng("lv", levels=structure, action_seconds=1, hand_interval_seconds=0.3), players)
        await room.play(runner)
        no_errors(caplog)
        assert runner.t.status.name == "FINISHED", f"still {runner.t.status.name} after {len(room.hands())} hands"
        assert runner.t.level_index >= 3 and len({bb for _, bb in room.checks}) >= 3  # hands at several levels
        assert room.port.refused == 0
        assert [s.chips for s in room.hands()[-1].ending if s.chips] == [6 * 1500]
        assert sorted(r.player for r in runner.results) == sorted(players)


@run_async
async def test_a_heads_up_shootout_on_the_dealer_opens_tables_of_two(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """rules/000 Shoot-out: "the last player remaining at each table advances to the next round";
    heads-up: two players a table. The dealer opens each round's tables with the round's size (2),
    not the tournament's 9-seat default, and the four players play it to one winner."""
    caplog.set_level(logging.ERROR)
    players = ["ann", "bob", "cat", "dan"]
    async with both(tmp_path) as room:
        structure = [pb.TournamentLevel(small_blind=5 << n, big_blind=10 << n, seconds=5.0) for n in range(12)]
        request = sng("hu", players=4, levels=structure, action_seconds=1, hand_interval_seconds=0.3)
        request.format, request.start_in_seconds, request.unregister_before_seconds = (
            pb.TOURNAMENT_FORMAT_HEADS_UP,
            5,
            0,
        )
        runner = await room.enter(request, players)
        await room.play(runner, steps=60)  # the scheduled start
        sizes = {n: a.table.settings.seat_count for n, a in room.actors("hu").items()}
        await room.play(runner)
        no_errors(caplog)
        assert runner.t.status.name == "FINISHED"
        assert sizes == {1: 2, 2: 2}  # round 1: two heads-up tables
        assert {a.table.settings.seat_count for a in room.actors("hu").values()} == {2}  # the final too
        assert len(room.actors("hu")) == 3 and room.port.refused == 0
        assert [r.place for r in sorted(runner.results, key=lambda r: r.place)][0] == 1
