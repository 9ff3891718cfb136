"""`cardroom play` driven like a person would: two terminal clients as subprocesses, lines on
stdin, against the real services. They log in, pick the table from the lobby, see their cards,
the table and the legal actions, act, play two hands, leave, and see their balances."""

from __future__ import annotations

import re
import subprocess
import sys
import threading
import time
from pathlib import Path

from cardroom.v1 import common_pb2, dealer_pb2 as d, dealer_pb2_grpc
from tests.e2e.stack import PLAY_GRANT, Stack

ROOT = Path(__file__).resolve().parents[2]


class Player:
    """One `cardroom play` process; a thread answers each 'your turn' with check/call."""

    def __init__(self, stack: Stack, name: str, table_pick: str, hands: int) -> None:
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
            ],
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            bufsize=1,
        )
        self.lines: list[str] = []
        self.table_pick, self.hands = table_pick, hands
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
        finished, first_turn = 0, True
        for line in self.proc.stdout:
            line = line.rstrip("\n")
            self.lines.append(line)
            if line.startswith("table (number or id)>"):
                self._write(self.table_pick)
            elif line.startswith("your turn:"):
                if first_turn:
                    self._write("raise lots")  # a typo first: the client explains, nothing is sent
                    first_turn = False
                legal = line.removeprefix("your turn:")
                self._write("check" if "check" in legal else "call")
            elif line.startswith("hand #") and line.endswith(" over"):
                finished += 1
                if finished == self.hands:
                    self._write("hands")  # his own hands (issue 12), then he leaves
                    self._write("leave")

    def wait(self, timeout: float) -> str:
        self.proc.wait(timeout)
        self.thread.join(5)
        return "\n".join(self.lines)


def test_cardroom_play_in_a_terminal(cardroom: Stack) -> None:
    table_id = f"play-{cardroom.run}"
    with cardroom.channel("dealer") as channel:
        dealer_pb2_grpc.DealerStub(channel).CreateTable(
            d.CreateTableRequest(
                table_id=table_id,
                config=d.TableConfig(
                    name="terminal test",
                    variant="NT",
                    currency=common_pb2.CURRENCY_PLAY,
                    seats=2,
                    stakes=d.Stakes(small_blind=5, big_blind=10),
                    hand_pause_seconds=0.2,
                ),
            ),
            timeout=10,
        )
    alice = Player(cardroom, f"alice{cardroom.run}", table_id, hands=2)
    time.sleep(1.0)
    bob = Player(cardroom, f"bob{cardroom.run}", table_id, hands=2)
    out_a, out_b = alice.wait(90), bob.wait(90)
    assert alice.proc.returncode == 0 and bob.proc.returncode == 0, out_a + "\n-----\n" + out_b
    for out, name in ((out_a, "alice"), (out_b, "bob")):
        assert f"logged in as {name}{cardroom.run}" in out
        assert f"balance: cash 0, play {PLAY_GRANT}" in out  # before sitting down
        assert "lobby:" in out and table_id in out
        assert "seated at seat" in out and "with 1000" in out  # the table's maximum: 100 big blinds
        assert "your cards: " in out and "pot " in out and "board:" in out
        assert "your turn: " in out
        assert "hand #2 over" in out and "left the table" in out
        # 'hands': one line per hand he played, newest first, with his own cards
        mine = [line for line in out.splitlines() if line.startswith(f"#{table_id}-")]
        assert [line.split()[0] for line in mine[:2]] == [f"#{table_id}-2", f"#{table_id}-1"], out
        assert all(re.search(r"seat \d \[\w\w \w\w\]", line) for line in mine[:2]), mine
    assert "raise needs one whole amount" in out_a
    if "you won " in out_a:  # heads-up: one's win is the other's loss
        assert "you lost " in out_b
    if "you won " in out_b:
        assert "you lost " in out_a
    assert any("call 5" in line or "check" in line for line in out_a.splitlines() if line.startswith("your turn:"))
    # Play money is conserved between the two players once both left.
    finals = [int(out.rsplit("play ", 1)[1].split()[0]) for out in (out_a, out_b)]
    assert sum(finals) == 2 * PLAY_GRANT
