"""Fast tier: the ``hands`` command of ``cardroom play`` (issue 12: a player's own recent hands)."""

from __future__ import annotations

import asyncio
import io

from cardroom.client.terminal import Terminal, parse_command
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g


def test_hands_commands_parse() -> None:
    assert parse_command("hands") == "hands 10"
    assert parse_command("hands 3") == "hands 3"
    assert parse_command("hands text") == "hands text 10"
    assert parse_command("hands text 2") == "hands text 2"
    assert str(parse_command("hands lots")).startswith("? hands")


class HandsClient:
    def __init__(self) -> None:
        self.asked: list[tuple[int, bool]] = []

    async def my_hands(self, limit: int = 10, pokerstars: bool = False) -> g.MyHandsResponse:
        self.asked.append((limit, pokerstars))
        hand = d.RecentHand(
            hand_id="t1-7",
            variant="NT",
            player_id="ann",
            seat=1,
            net=40,
            board=["Qh", "7c", "2d", "9s", "3h"],
            seats=[
                d.RecentHandSeat(seat=1, player_id="ann", cards=["As", "Kd"], shown=True),
                d.RecentHandSeat(seat=2, player_id="bob", cards=["Jc", "Jd"], shown=True),
                d.RecentHandSeat(seat=3, player_id="cat", folded=True),
            ],
            pokerstars="PokerStars Hand #7: ...",
        )
        return g.MyHandsResponse(
            player_id="ann", hands=[hand], pokerstars="PokerStars Hand #7: ...\n" if pokerstars else ""
        )


def test_hands_prints_a_line_per_hand_or_the_pokerstars_text() -> None:
    out = io.StringIO()
    client = HandsClient()
    term = Terminal(client, out=out)  # type: ignore[arg-type]
    asyncio.run(term.hands(5, text=False))
    assert out.getvalue().splitlines() == ["#t1-7 NT  seat 1 [As Kd]  board Qh 7c 2d 9s 3h  won 40  (bob showed Jc Jd)"]
    asyncio.run(term.hands(2, text=True))
    assert out.getvalue().splitlines()[-1] == "PokerStars Hand #7: ..."
    assert client.asked == [(5, False), (2, True)]
