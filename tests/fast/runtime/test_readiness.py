"""A server with a ``ready`` hook (cardroom.runtime.readiness): live at once, its own methods
UNAVAILABLE/STARTING until the hook is done, then served; a failed hook stops it with an error."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardroom.runtime.config import ServiceConfig
from cardroom.runtime.readiness import LIVENESS, STARTING
from cardroom.runtime.server import Registration, serve
from cardroom.v1 import evaluator_pb2, evaluator_pb2_grpc
from tests.ports import free_port

SERVING, NOT_SERVING = health_pb2.HealthCheckResponse.SERVING, health_pb2.HealthCheckResponse.NOT_SERVING


def _config(tmp_path: Path) -> ServiceConfig:
    return ServiceConfig("evaluator", "127.0.0.1", free_port(), 0, "", tmp_path, "INFO", 0.5, 0.0)


class Answering(evaluator_pb2_grpc.EvaluatorServicer):
    async def Evaluate(self, request, context):  # type: ignore[no-untyped-def]
        return evaluator_pb2.EvaluateResponse(qualified=True)


def _registration() -> Registration:
    name = evaluator_pb2.DESCRIPTOR.services_by_name["Evaluator"].full_name
    return Registration(name, evaluator_pb2_grpc.add_EvaluatorServicer_to_server, Answering())


async def _status(channel: grpc.aio.Channel, service: str) -> int:
    for _ in range(100):
        try:
            reply = await health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=1
            )
            return int(reply.status)
        except grpc.aio.AioRpcError:
            await asyncio.sleep(0.05)
    raise AssertionError("the server never answered")


def test_live_at_once_its_methods_refused_until_ready_then_served(tmp_path: Path) -> None:
    config = _config(tmp_path)

    async def body() -> None:
        release = asyncio.Event()

        async def ready() -> None:
            await release.wait()

        server = asyncio.create_task(serve(config, [_registration()], ready=ready))
        async with grpc.aio.insecure_channel(f"127.0.0.1:{config.grpc_port}") as channel:
            assert await _status(channel, LIVENESS) == SERVING
            assert await _status(channel, "") == NOT_SERVING
            assert await _status(channel, "cardroom.v1.Evaluator") == NOT_SERVING
            stub = evaluator_pb2_grpc.EvaluatorStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await stub.Evaluate(evaluator_pb2.EvaluateRequest(), timeout=2)
            assert refused.value.code() is grpc.StatusCode.UNAVAILABLE
            assert "starting" in (refused.value.details() or "")
            assert any(v == STARTING.encode() or STARTING in str(v) for _, v in refused.value.trailing_metadata() or ())
            release.set()
            for _ in range(100):
                if await _status(channel, "") == SERVING:
                    break
                await asyncio.sleep(0.02)
            assert await _status(channel, "cardroom.v1.Evaluator") == SERVING
            assert (await stub.Evaluate(evaluator_pb2.EvaluateRequest(), timeout=2)).qualified  # the servicer answered
        os.kill(os.getpid(), signal.SIGTERM)
        await asyncio.wait_for(server, 10)

    asyncio.run(body())


def test_a_failed_ready_hook_stops_the_server_with_an_error(tmp_path: Path) -> None:
    async def ready() -> None:
        raise RuntimeError("restore failed")

    with pytest.raises(SystemExit, match="start-up failed"):
        asyncio.run(serve(_config(tmp_path), [_registration()], ready=ready))
