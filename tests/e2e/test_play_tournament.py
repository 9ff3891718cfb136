"""Issue 15: "`cardroom play` can list tournaments, register and play its tournament table (moved
automatically when the table breaks)". A person runs ``cardroom play --tournament ID`` (a real
process, lines on stdin) against every service as a real process, the tournament's tables on the
dealer (``TOURNAMENT_TABLES=dealer``): he registers in an 8-player NL Hold'em Sit & Go of two 6-max
tables that seven ``cardroom bots --tournament`` bots fill, is seated at his table, acts there, is
followed to the other table when his breaks, and is told his place when he busts or wins. And
``cardroom demo-sng``, the demo Sit & Go ``make run`` keeps open ("`make run` also opens a demo sit &
go that bots fill and a person can join"): bots fill it, the next opens when it is over.

rules/000: "During a Multi-table tournament, as players are eliminated, players will be moved
randomly from one table to another in order to keep the number of players at each table as balanced
as possible."; "A player will change seat only when moved from a table to another table during a
multi-table tournament."

How his table is made to break (the core breaks the shortest table once the players fit in one,
``cardroom.core.tournament.seating.table_to_break``): 8 players are drawn 4 and 4; the bots at his
table go all in at every turn, the bots at the other table only check or call (nobody is busted
there), he checks or folds. Once two of his table's bots are out, 6 players are left — his table
(2, the shortest) breaks and both move to the other. There everybody goes all in (so the tournament
ends soon), he too, until he is out or has won."""

from __future__ import annotations

import asyncio
import random
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from cardroom.client.connection import OperatorClient
from cardroom.client.policy import passive
from cardroom.client.tournament_bots import TournamentBots, TournamentBotSettings
from cardroom.client.view import TableView
from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g, tournament_pb2 as pb, tournament_pb2_grpc
from tests.e2e.stack import OPERATOR_TOKEN, Stack

ROOT = Path(__file__).resolve().parents[2]
BUY_IN, FEE, STACK, FUNDS = 1000, 100, 1500, 5000
ENTRANTS = 8


@pytest.fixture(scope="module")
def room(kafka) -> Iterator[Stack]:
    stack = Stack.start(kafka.bootstrap, tournaments=True, tournament_tables="dealer")
    try:
        yield stack
    finally:
        stack.stop()


def shove(legal: d.LegalActionsView) -> g.PlayAction:
    """All in when he may bet or raise, else call, else check."""
    for action in (d.ACTION_TYPE_RAISE, d.ACTION_TYPE_BET):
        if action in legal.actions:
            return g.PlayAction(action=action, amount=legal.max_to)
    return passive(legal)


class Person:
    """``cardroom play --tournament ID`` as a subprocess; a thread answers his turns: check or fold
    at his first table (and asks once for chips, which a tournament table refuses), then at his next
    table check or fold once and all in from then on; ``quit`` at the lobby once he is placed."""

    def __init__(self, stack: Stack, name: str, tournament_id: str) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cardroom.cli.main",
                "play",
                "--player",
                name,
                "--gateway",
                stack.address("gateway"),
                "--tournament",
                tournament_id,
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self.lines: list[str] = []
        self.tournament_id = tournament_id
        self.moved = threading.Event()
        self.thread = threading.Thread(target=self._drive, daemon=True)
        self.thread.start()

    def _write(self, line: str) -> None:
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line + "\n")
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def _drive(self) -> None:
        assert self.proc.stdout is not None
        turns_here, asked_for_chips = 0, False
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            if "your new table is #" in line:
                self.moved.set()
                turns_here = 0
            elif line.startswith("your turn:"):
                legal = line.removeprefix("your turn:")
                turns_here += 1
                if self.moved.is_set() and turns_here > 1:
                    allin = re.search(r"(raise|bet) \d+\.\.(\d+)", legal)
                    self._write(
                        f"{allin.group(1)} {allin.group(2)}" if allin else "call" if "call" in legal else "check"
                    )
                else:
                    self._write("check" if "check" in legal else "fold")
                    if not asked_for_chips:
                        asked_for_chips = True
                        self._write("add 500")
            elif line.startswith((f"you won {self.tournament_id}:", f"you are out of {self.tournament_id}:")):
                self._write("quit")

    def wait(self, timeout: float) -> str:
        """What he saw, once the process ended (killed after ``timeout``: the output says where it stood)."""
        try:
            self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            self.lines.append(f"(still running after {timeout:.0f} s: killed)")
        self.thread.join(5)
        return "\n".join(self.lines)


def test_a_person_plays_his_sit_and_go_from_table_to_table_with_cardroom_play(room: Stack) -> None:
    tid = f"sng-play-{room.run}"
    person = f"pat{room.run}"
    with room.channel("tournament") as channel:
        tournament_pb2_grpc.TournamentStub(channel).CreateTournament(
            pb.CreateTournamentRequest(
                tournament_id=tid,
                format=pb.TOURNAMENT_FORMAT_SNG,
                variant="NT",
                buy_in=BUY_IN,
                fee=FEE,
                starting_stack=STACK,
                max_entrants=ENTRANTS,
                seats=6,
                level_seconds=600,  # the blinds stay small: only the all-ins bust anybody
                hand_interval_seconds=0.05,
                action_seconds=5,
            ),
            timeout=20,
        )

    async def fund() -> None:
        operator = OperatorClient(room.address("gateway"), OPERATOR_TOKEN)
        try:
            await operator.fund(person, common_pb2.CURRENCY_CASH, FUNDS, f"fund-{person}", "tournament test")
        finally:
            await operator.close()

    asyncio.run(fund())
    play = Person(room, person, tid)

    def policy(view: TableView, legal: d.LegalActionsView, rng: random.Random) -> g.PlayAction:
        at_his_table = any(s.player_id == person for s in view.seats.values())
        return shove(legal) if at_his_table or play.moved.is_set() else passive(legal)

    bots = TournamentBots(
        TournamentBotSettings(
            gateway=room.address("gateway"),
            operator_token=OPERATOR_TOKEN,
            tournament_id=tid,
            players=ENTRANTS - 1,
            fund=FUNDS,
            seed=15,
            timeout=300,
        ),
        policy=policy,
    )
    places: dict[str, int] = {}
    failure: list[BaseException] = []

    def run_bots() -> None:
        try:
            places.update(asyncio.run(bots.run()))
        except BaseException as exc:  # noqa: BLE001 - reported by the test
            failure.append(exc)

    bots_thread = threading.Thread(target=run_bots, daemon=True)
    bots_thread.start()
    out = play.wait(330)
    bots_thread.join(330)
    assert play.proc.returncode == 0, out
    assert not failure, failure

    # Registered by `--tournament`, waited for the start, then his table.
    assert f"registered in {tid}: {BUY_IN + FEE} (buy-in and fee) from your cash account" in out, out
    # (his chips as the status gives them: the first hand may have started, his blind posted)
    first = re.search(rf"{tid}: your table is #(\d+) \(tt\.{tid}\.(\d+)\), seat (\d+), (\d+) chips", out)
    assert first and first.group(1) == first.group(2) and 0 < int(first.group(4)) <= STACK, out
    # He acted there: his turn came, he checked or folded (what the table shows of him).
    before_move = out.split("you are moved to another table", 1)
    assert len(before_move) == 2, out
    assert "your turn: " in before_move[0] and re.search(rf"seat {first.group(3)}: {person} \(you\)", before_move[0]), (
        out
    )
    assert re.search(rf"^{person} (check|fold)", before_move[0], re.M), out
    # A tournament table takes no chips from a player: the table's answer is shown.
    assert "chips come only from re-buys and add-ons" in before_move[0], out
    # Followed to the other table when his broke (only two tables: the other one).
    new = re.search(rf"{tid}: your new table is #(\d+) \(tt\.{tid}\.(\d+)\), seat (\d+)", before_move[1])
    assert new and new.group(1) == new.group(2) and new.group(1) != first.group(1), out
    after = before_move[1].split(new.group(0), 1)[1]
    assert "your turn: " in after, out  # he played at his new table

    # Told his place, the tournament's: every player placed, one winner.
    info = pb.TournamentInfo()
    with room.channel("tournament") as channel:
        info = tournament_pb2_grpc.TournamentStub(channel).GetTournament(
            pb.GetTournamentRequest(tournament_id=tid), timeout=10
        )
    results = {r.player_id: r for r in info.results}
    assert info.status == pb.TOURNAMENT_STATUS_FINISHED and len(results) == ENTRANTS
    mine = results[person]
    if mine.place == 1:
        assert f"you won {tid}: 1st of {ENTRANTS}, prize {mine.prize} to your cash account" in out, out
    else:
        said = f"you are out of {tid}: you finished {mine.place}"
        assert said in out and f" of {ENTRANTS}" in out.split(said, 1)[1].splitlines()[0], out
    assert {p: places[p] for p in places} == {p: r.place for p, r in results.items() if p != person}


def test_the_demo_sit_and_go_is_filled_by_bots_and_the_next_opens_when_it_is_over(room: Stack, tmp_path: Path) -> None:
    """``cardroom demo-sng`` (what ``make run`` keeps open): free, every seat but one taken by bots at
    once, the last by a bot after the wait when no person came, and the next one opened when it is
    over — here heads-up with fast levels, two rounds."""
    tls_dir = room.tls_env("operator").get("TLS_DIR", "")  # the operator's certificate, as make run's
    log = tmp_path / "demo-sng.log"
    with open(log, "w") as sink:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cardroom.cli.main",
                "demo-sng",
                "--gateway",
                room.address("gateway"),
                "--tournament",
                room.address("tournament"),
                *(["--tls-dir", tls_dir] if tls_dir else []),
                "--seats",
                "2",
                "--last-seat-after",
                "1",
                "--level-seconds",
                "5",
                "--think-ms",
                "0",
                "--prefix",
                f"demo-{room.run}",
                "--rounds",
                "2",
            ],
            cwd=ROOT,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
    try:
        proc.wait(300)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    out = log.read_text()
    assert proc.returncode == 0, out
    opened = re.findall(rf"^demo sng=(demo-{room.run}-\S+) open: 1 bots take their seats", out, re.M)
    assert len(opened) == 2 and opened[0] != opened[1], out
    with room.channel("tournament") as channel:
        stub = tournament_pb2_grpc.TournamentStub(channel)
        for tid in opened:
            assert f"demo sng={tid} last seat: nobody came in 1 s, a bot takes it" in out, out
            info = stub.GetTournament(pb.GetTournamentRequest(tournament_id=tid), timeout=10)
            assert info.status == pb.TOURNAMENT_STATUS_FINISHED and (info.buy_in, info.fee) == (0, 0), info
            assert sorted(r.place for r in info.results) == [1, 2] and all(r.prize == 0 for r in info.results)
            assert f"demo sng={tid} finished: 1. " in out, out
    # the second one opened only once the first was over
    assert out.index(f"demo sng={opened[0]} finished") < out.index(f"demo sng={opened[1]} open"), out
