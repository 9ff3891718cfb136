"""The runtime's GuardInterceptor on an in-process server, for all four kinds of method: a body that
is not a valid request message is INVALID_ARGUMENT (MALFORMED_REQUEST), an exception the servicer did
not expect INTERNAL with a fixed message (not UNKNOWN, not the exception's text), a ServiceError raised
without ``@rpc`` keeps its status, and valid requests pass through decoded."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest

from cardroom.runtime import errors
from cardroom.runtime.guard import MALFORMED_REQUEST, GuardInterceptor
from cardroom.v1 import evaluator_pb2 as ev

Request, Reply = ev.EvaluateRequest, ev.EvaluateResponse
GARBAGE = b"\xff\xff\xff\xff"
GOOD = Request(ranking=ev.RANKING_HIGH, hole=["Ah"]).SerializeToString()
LATE = 0.3  # s the "late" request takes, past its caller's deadline of DEADLINE
DEADLINE = 0.1


def _verdict(request: Any) -> Reply:
    """Echo ``qualified`` for a decoded request; "boom" fails unexpectedly, "refuse" with a ServiceError."""
    assert isinstance(request, Request), type(request)
    if request.hole and request.hole[0] == "boom":
        raise RuntimeError("secret internals: /etc/passwd")
    if request.hole and request.hole[0] == "refuse":
        raise errors.precondition("not now")
    if request.hole and request.hole[0] == "late":  # the caller's deadline passes on the way to a refusal
        time.sleep(LATE)  # the loop held: grpc cannot cancel the handler before it answers
        raise errors.precondition("too late")
    return Reply(qualified=True)


async def unary_unary(request: Any, context: grpc.aio.ServicerContext) -> Reply:
    return _verdict(request)


async def unary_stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Reply]:
    yield _verdict(request)


async def stream_unary(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Reply:
    reply = Reply()
    async for request in requests:
        reply = _verdict(request)
    return reply


async def stream_stream(requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> AsyncIterator[Reply]:
    async for request in requests:
        yield _verdict(request)


class Servicer:
    """The same four behaviours as a service writes them: methods wrapped with ``@rpc``."""

    @errors.rpc
    async def unary_unary(self, request: Any, context: grpc.aio.ServicerContext) -> Reply:
        return _verdict(request)

    @errors.rpc
    async def unary_stream(self, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Reply]:
        yield _verdict(request)

    @errors.rpc
    async def stream_unary(self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext) -> Reply:
        return await stream_unary(requests, context)

    @errors.rpc
    async def stream_stream(
        self, requests: AsyncIterator[Any], context: grpc.aio.ServicerContext
    ) -> AsyncIterator[Reply]:
        async for reply in stream_stream(requests, context):
            yield reply


KINDS = {
    "UnaryUnary": grpc.unary_unary_rpc_method_handler,
    "UnaryStream": grpc.unary_stream_rpc_method_handler,
    "StreamUnary": grpc.stream_unary_rpc_method_handler,
    "StreamStream": grpc.stream_stream_rpc_method_handler,
}
BEHAVIOURS = {
    "UnaryUnary": unary_unary,
    "UnaryStream": unary_stream,
    "StreamUnary": stream_unary,
    "StreamStream": stream_stream,
}
WRAPPED = {
    "UnaryUnary": Servicer().unary_unary,
    "UnaryStream": Servicer().unary_stream,
    "StreamUnary": Servicer().stream_unary,
    "StreamStream": Servicer().stream_stream,
}


async def _call(
    kind: str, body: bytes, timeout: float = 10, behaviours: dict[str, Any] = BEHAVIOURS
) -> tuple[grpc.StatusCode, str, str]:
    server = grpc.aio.server(interceptors=[GuardInterceptor()])
    handlers = {
        name: factory(
            behaviours[name], request_deserializer=Request.FromString, response_serializer=Reply.SerializeToString
        )
        for name, factory in KINDS.items()
    }
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("test.Guarded", handlers)])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            method = f"/test.Guarded/{kind}"
            try:
                if kind == "UnaryUnary":
                    await channel.unary_unary(method)(body, timeout=timeout)
                elif kind == "UnaryStream":
                    async for _ in channel.unary_stream(method)(body, timeout=timeout):
                        pass
                elif kind == "StreamUnary":
                    await channel.stream_unary(method)(iter([GOOD, body]), timeout=timeout)
                else:
                    async for _ in channel.stream_stream(method)(iter([GOOD, body]), timeout=timeout):
                        pass
            except grpc.aio.AioRpcError as err:
                return err.code(), err.details() or "", errors.reason_of(err)
            return grpc.StatusCode.OK, "", ""
    finally:
        await server.stop(0)


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_malformed_body_is_invalid_argument(kind: str) -> None:
    code, details, reason = asyncio.run(_call(kind, GARBAGE))
    assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, MALFORMED_REQUEST), details
    assert details == f"request: the 4-byte body of /test.Guarded/{kind} is not a valid cardroom.v1.EvaluateRequest"


@pytest.mark.parametrize("kind", list(KINDS))
def test_valid_requests_arrive_decoded(kind: str) -> None:
    assert asyncio.run(_call(kind, GOOD))[0] == grpc.StatusCode.OK


@pytest.mark.parametrize("kind", list(KINDS))
def test_an_unexpected_error_is_internal_without_its_text(kind: str) -> None:
    code, details, reason = asyncio.run(_call(kind, Request(hole=["boom"]).SerializeToString()))
    assert (code, reason) == (grpc.StatusCode.INTERNAL, "INTERNAL")
    assert details == f"/test.Guarded/{kind} failed unexpectedly; the service logged it"


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_service_error_without_rpc_keeps_its_status(kind: str) -> None:
    code, details, _ = asyncio.run(_call(kind, Request(hole=["refuse"]).SerializeToString()))
    assert (code, details) == (grpc.StatusCode.FAILED_PRECONDITION, "not now")


@pytest.mark.parametrize("kind", list(KINDS))
def test_a_refusal_for_a_caller_gone_is_not_an_error_of_the_service(
    kind: str, caplog: pytest.LogCaptureFixture
) -> None:
    """Seen in a load test on a slow machine (2026-12-08): the gateway forwards a call with its caller's deadline,
    the forward fails with DEADLINE_EXCEEDED a moment before grpc cancels the handler, and the refusal's status can
    no longer be sent (grpc's ExecuteBatchError): 576 "unexpected error" tracebacks in one run, each followed by
    grpc's own "Unexpected [UsageError]" as the guard tried INTERNAL on a call already over. A caller who gave up
    is no failure of the service: nothing is logged above INFO."""
    with caplog.at_level(logging.INFO):
        late = Request(hole=["late"]).SerializeToString()
        code, _, _ = asyncio.run(_call(kind, late, timeout=DEADLINE, behaviours=WRAPPED))
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED
    assert [(r.name, r.getMessage()) for r in caplog.records if r.levelno >= logging.WARNING] == []
