"""A refused call of a load-test player is reported with the gateway's details, not only its code:
two cash300 runs ended with ``balance: CANCELLED`` (25 players at once) and nothing to say why."""

from __future__ import annotations

import asyncio

import grpc

from cardroom.client.loadtest.recorder import FIRST_EXAMPLES, Recorder, refusal_kind
from cardroom.v1 import dealer_pb2 as d
from tests.fast.loadtest.players import load_player


class RefusingClient:
    async def balances(self) -> None:
        raise grpc.aio.AioRpcError(
            grpc.StatusCode.CANCELLED, grpc.aio.Metadata(), grpc.aio.Metadata(), details="Received RST_STREAM"
        )


def test_a_refused_balance_read_is_reported_with_its_details() -> None:
    player = load_player("bot-1", d.TableInfo(table_id="t-1", min_buy_in=100, max_buy_in=1000))
    player.client = RefusingClient()  # type: ignore[assignment]

    assert asyncio.run(player._balance()) is None
    [example] = player.recorder.examples
    assert example.endswith("s balance: CANCELLED Received RST_STREAM")


def test_each_kind_of_error_has_an_example_even_after_the_first_twenty() -> None:
    """A slow-machine run (2026-12-08) counted ``FAILED_PRECONDITION (join)`` six times, but its twenty examples
    were all earlier deadlines and turn refusals: nothing said what the six were. Past the first twenty, the first
    of each kind is kept too — in a load generator and again where the coordinator merges what they send."""
    generator = Recorder(started=0.0)
    for n in range(FIRST_EXAMPLES + 5):
        generator.error("join", "DEADLINE_EXCEEDED", f"try {n}")
    generator.refused(0.1, "FAILED_PRECONDITION", "OUT_OF_TURN")
    generator.example("p1 act r1: not your turn", refusal_kind("FAILED_PRECONDITION", "OUT_OF_TURN"))
    generator.error("join", "FAILED_PRECONDITION", "table t-9 is full")
    generator.error("join", "FAILED_PRECONDITION", "table t-9 is full again")
    assert len(generator.examples) == FIRST_EXAMPLES + 2
    assert generator.examples[-2].endswith("p1 act r1: not your turn")
    assert generator.examples[-1].endswith("join: FAILED_PRECONDITION table t-9 is full")

    coordinator = Recorder(started=0.0)
    coordinator.error("login", "UNAVAILABLE", "down")  # its own first
    for text, kind in zip(generator.examples, generator.example_kinds, strict=True):
        coordinator.keep(text, kind)
    kept = coordinator.examples
    assert len(kept) == FIRST_EXAMPLES + 2 and kept[0].endswith("login: UNAVAILABLE down")
    assert kept[-2].endswith("not your turn") and kept[-1].endswith("table t-9 is full")
    assert set(coordinator.example_kinds) == {
        "UNAVAILABLE (login)",
        "DEADLINE_EXCEEDED (join)",
        "FAILED_PRECONDITION/OUT_OF_TURN",
        "FAILED_PRECONDITION (join)",
    }
