"""Fast tier: a Play stream the load test itself ended is not counted as an error, whatever status
grpc.aio gives it.

The bug: a stream cancelled by a reconnect storm or by the run's end was counted as a drop or a stop
only when it ended CANCELLED. A cancel that comes while a request is being written (a seat command, an
action) ends it INTERNAL in grpc.aio, which the client reads as UNAVAILABLE "its status was lost"
(cardroom.runtime.lost_status): 36 such "errors" in the stand-up of a reconnect run at 600 tables."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import grpc
import pytest

from cardroom.client.loadtest.player import BROKEN, DROPPED, STOPPED
from cardroom.v1 import dealer_pb2 as d
from tests.fast.loadtest.players import load_player

LOST = "the Play stream ended while a request was being sent (its status was lost)"


class EndedOnCancel:
    """A Play stream that, once cancelled, ends with ``code`` (as grpc.aio ends one)."""

    def __init__(self, code: grpc.StatusCode) -> None:
        self.code = code
        self.cancelled = asyncio.Event()

    def cancel(self) -> None:
        self.cancelled.set()

    async def send(self, request: object) -> str:
        return "rid"

    async def items(self) -> AsyncIterator[tuple[str, object]]:
        await self.cancelled.wait()
        raise grpc.aio.AioRpcError(self.code, grpc.aio.Metadata(), grpc.aio.Metadata(), details=LOST)
        yield  # an async generator  # pragma: no cover


class Client:
    def __init__(self, stream: EndedOnCancel) -> None:
        self.stream = stream

    def play(self, table_id: str) -> EndedOnCancel:
        return self.stream


def session_end(code: grpc.StatusCode, by: str) -> tuple[str, dict[str, int]]:
    async def main() -> tuple[str, dict[str, int]]:
        player = load_player("p1", d.TableInfo(table_id="t1"))
        stream = EndedOnCancel(code)
        player.client = Client(stream)  # type: ignore[assignment]
        session = asyncio.create_task(player._session(reopened=False))
        await asyncio.sleep(0.01)
        if by == "storm":
            player.drop.set()
        elif by == "run's end":
            player.stopping.set()
        else:
            stream.cancel()  # neither: the stream broke on its own
        outcome = await asyncio.wait_for(session, 5)
        errors: dict[str, int] = {}
        for bucket in player.recorder.buckets.values():
            for key, count in bucket.errors.items():
                errors[key] = errors.get(key, 0) + count
        return outcome, errors

    return asyncio.run(main())


@pytest.mark.parametrize("code", [grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE])
def test_a_stream_the_storm_dropped_is_a_drop_whatever_its_status(code: grpc.StatusCode) -> None:
    assert session_end(code, "storm") == (DROPPED, {})


@pytest.mark.parametrize("code", [grpc.StatusCode.CANCELLED, grpc.StatusCode.UNAVAILABLE])
def test_a_stream_the_run_s_end_stopped_is_a_stop_whatever_its_status(code: grpc.StatusCode) -> None:
    assert session_end(code, "run's end") == (STOPPED, {})


def test_a_stream_that_broke_on_its_own_is_an_error_and_is_opened_again() -> None:
    assert session_end(grpc.StatusCode.UNAVAILABLE, "itself") == (BROKEN, {"UNAVAILABLE (play stream)": 1})
