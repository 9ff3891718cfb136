"""A call that failed or was refused leaves no reference cycle behind in the runtime's wrappers (the
MetricsInterceptor, which counts it by status, and ``errors.rpc``, which turns a refusal into its
status): a cycle would keep the call's whole state (its request, its context, the handler's frames — a
Play session at the gateway) alive until a garbage collection, which walks it (docs/capacity.md, "What a
young collection walks")."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import grpc
import pytest
from prometheus_client import REGISTRY

from cardroom.runtime import errors
from cardroom.runtime.metrics import MetricsInterceptor


class _State:
    """Something a handler's frame holds (weakly referenceable: we watch it die)."""


class _Aborted(Exception):
    """What grpc.aio's ``context.abort`` raises."""


class _Context:
    def __init__(self) -> None:
        self.aborted: tuple[Any, ...] = ()

    def code(self) -> None:
        return None

    async def abort(self, code: grpc.StatusCode, details: str, trailing_metadata: Any = ()) -> None:
        self.aborted = (code, details)
        raise _Aborted(details)


class _Details:
    def __init__(self, method: str) -> None:
        self.method = method


@pytest.fixture
def collector_off() -> Iterator[None]:
    """Only reference counting frees anything meanwhile: what a cycle holds stays."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _intercepted(method: str, handler: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
    async def continuation(_details: Any) -> grpc.RpcMethodHandler:
        return handler

    return asyncio.run(MetricsInterceptor().intercept_service(continuation, _Details(method)))  # type: ignore[arg-type]


def _handled(kind: str, method: str, code: str) -> float:
    labels = {"grpc_type": kind, "grpc_service": "t.Test", "grpc_method": method, "grpc_code": code}
    return REGISTRY.get_sample_value("grpc_server_handled_total", labels) or 0.0


def _failing_unary(kept: list[weakref.ref[_State]]) -> Callable[..., Any]:
    async def behaviour(request: Any, context: Any) -> Any:
        state = _State()
        kept.append(weakref.ref(state))
        raise RuntimeError("refused")

    return behaviour


def _failing_stream(kept: list[weakref.ref[_State]]) -> Callable[..., Any]:
    async def behaviour(request: Any, context: Any) -> AsyncIterator[int]:
        state = _State()
        kept.append(weakref.ref(state))
        yield 1
        raise RuntimeError("refused")

    return behaviour


@pytest.mark.usefixtures("collector_off")
def test_a_failed_unary_call_is_counted_and_its_state_freed_without_a_collection() -> None:
    kept: list[weakref.ref[_State]] = []
    handler = _intercepted("/t.Test/FailUnary", grpc.unary_unary_rpc_method_handler(_failing_unary(kept)))
    before = _handled("unary", "FailUnary", "UNKNOWN")

    async def call() -> None:
        with pytest.raises(RuntimeError):
            await handler.unary_unary(object(), _Context())

    asyncio.run(call())
    assert _handled("unary", "FailUnary", "UNKNOWN") == before + 1
    assert len(kept) == 1 and kept[0]() is None, "the failed call's state is held by a reference cycle"


@pytest.mark.usefixtures("collector_off")
def test_a_failed_stream_is_counted_and_its_state_freed_without_a_collection() -> None:
    kept: list[weakref.ref[_State]] = []
    handler = _intercepted("/t.Test/FailStream", grpc.unary_stream_rpc_method_handler(_failing_stream(kept)))
    before = _handled("server_stream", "FailStream", "UNKNOWN")

    async def call() -> list[int]:
        items: list[int] = []
        with pytest.raises(RuntimeError):
            async for item in handler.unary_stream(object(), _Context()):
                items.append(item)
        return items

    assert asyncio.run(call()) == [1]
    assert _handled("server_stream", "FailStream", "UNKNOWN") == before + 1
    assert len(kept) == 1 and kept[0]() is None, "the failed stream's state is held by a reference cycle"


@pytest.mark.usefixtures("collector_off")
def test_a_cancelled_stream_is_counted_and_its_state_freed_without_a_collection() -> None:
    """A Play stream whose player went away: grpc cancels the handler's task while it waits for the
    session's next event."""
    kept: list[weakref.ref[_State]] = []

    async def waiting(request: Any, context: Any) -> AsyncIterator[int]:
        state, events = _State(), asyncio.Queue[int]()
        kept.append(weakref.ref(state))
        yield 1
        yield await events.get()  # never comes

    handler = _intercepted("/t.Test/Wait", grpc.unary_stream_rpc_method_handler(waiting))
    before = _handled("server_stream", "Wait", "CANCELLED")

    async def call() -> None:
        async def read() -> None:
            async for _ in handler.unary_stream(object(), _Context()):
                pass

        task = asyncio.create_task(read())
        await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(call())
    assert _handled("server_stream", "Wait", "CANCELLED") == before + 1
    assert len(kept) == 1 and kept[0]() is None, "the cancelled stream's state is held by a reference cycle"


def test_a_call_that_succeeds_is_counted_ok_once() -> None:
    async def behaviour(request: Any, context: Any) -> str:
        return "fine"

    handler = _intercepted("/t.Test/Fine", grpc.unary_unary_rpc_method_handler(behaviour))
    before = _handled("unary", "Fine", "OK")
    assert asyncio.run(handler.unary_unary(object(), _Context())) == "fine"
    assert _handled("unary", "Fine", "OK") == before + 1


class _Servicer:
    def __init__(self, kept: list[weakref.ref[_State]]) -> None:
        self.kept = kept

    @errors.rpc
    async def Refuse(self, request: Any, context: Any) -> Any:  # noqa: N802 - a gRPC method's name
        state = _State()
        self.kept.append(weakref.ref(state))
        raise errors.precondition("not now")

    @errors.rpc
    async def RefuseStream(self, request: Any, context: Any) -> AsyncIterator[int]:  # noqa: N802
        state = _State()
        self.kept.append(weakref.ref(state))
        yield 1
        raise errors.precondition("not any more")


@pytest.mark.usefixtures("collector_off")
def test_a_refusal_ends_the_call_with_its_status_and_its_state_is_freed_without_a_collection() -> None:
    kept: list[weakref.ref[_State]] = []
    servicer, unary_context, stream_context = _Servicer(kept), _Context(), _Context()

    async def calls() -> list[int]:
        with pytest.raises(_Aborted):
            await servicer.Refuse(object(), unary_context)
        items: list[int] = []
        with pytest.raises(_Aborted):
            async for item in servicer.RefuseStream(object(), stream_context):
                items.append(item)
        return items

    assert asyncio.run(calls()) == [1]
    assert unary_context.aborted == (grpc.StatusCode.FAILED_PRECONDITION, "not now")
    assert stream_context.aborted == (grpc.StatusCode.FAILED_PRECONDITION, "not any more")
    assert len(kept) == 2 and all(ref() is None for ref in kept), "a refused call's state is held by a cycle"
