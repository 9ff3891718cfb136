"""The bots retry their idempotent set-up calls (login, join with one request id, operator calls)
after a transient failure — a loaded machine made a sit-down exceed its deadline and end the run."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from cardroom.client.bots import retrying
from tests.fast.gateway.fakes import rpc_error


def test_transient_failures_are_retried_and_others_are_not() -> None:
    async def scenario() -> None:
        calls: list[int] = []

        async def flaky() -> str:
            calls.append(1)
            if len(calls) < 3:
                raise rpc_error(grpc.StatusCode.DEADLINE_EXCEEDED, "Deadline Exceeded")
            return "seated"

        assert await retrying(flaky, delay=0) == "seated" and len(calls) == 3

        async def refused() -> str:
            calls.append(1)
            raise rpc_error(grpc.StatusCode.FAILED_PRECONDITION, "table full")

        calls.clear()
        with pytest.raises(grpc.aio.AioRpcError):
            await retrying(refused, delay=0)
        assert len(calls) == 1

        async def down() -> str:
            calls.append(1)
            raise rpc_error(grpc.StatusCode.UNAVAILABLE, "down")

        calls.clear()
        with pytest.raises(grpc.aio.AioRpcError):
            await retrying(down, attempts=3, delay=0)
        assert len(calls) == 3

    asyncio.run(scenario())
