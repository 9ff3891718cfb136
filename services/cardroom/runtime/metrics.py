"""gRPC server metrics for ``grpc.aio`` (names as in go-grpc-prometheus) and ``/metrics``."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc
from prometheus_client import Counter, Histogram, start_http_server

#: Upper bounds for latencies measured against the act SLO (p99 <= 50 ms, docs/capacity.md): 5 ms apart up
#: to 30 ms and 10 ms apart to 50, so a p99 near the objective reads within a few milliseconds rather than
#: anywhere between 25 and 50 ms (histogram_quantile interpolates inside one bucket).
LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04, 0.05, 0.075, 0.1, 0.25, 0.5, 1, 2.5,
)  # fmt: skip

STARTED = Counter(
    "grpc_server_started_total", "RPCs started on the server.", ["grpc_type", "grpc_service", "grpc_method"]
)
HANDLED = Counter(
    "grpc_server_handled_total",
    "RPCs completed on the server, whatever their status.",
    ["grpc_type", "grpc_service", "grpc_method", "grpc_code"],
)
HANDLING = Histogram(
    "grpc_server_handling_seconds",
    "Time from RPC start to its completion on the server.",
    ["grpc_type", "grpc_service", "grpc_method"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)

GC_PAUSE = Histogram(
    "python_gc_pause_seconds",
    "Time the garbage collector stopped the process, per collection, by generation (2: a full collection);"
    " timed by cardroom.runtime.collector.",
    ["generation"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5),
)

LOOP_LAG = Histogram(
    "python_asyncio_loop_lag_seconds",
    "How much later than asked the event loop woke a periodic task: the wait every call of the process"
    " had at that moment (cardroom.runtime.looplag).",
    buckets=LATENCY_BUCKETS,
)


def start_metrics_server(host: str, port: int) -> None:
    """Serve the default Prometheus registry at ``http://host:port/metrics`` (a daemon thread)."""
    start_http_server(port, addr=host)


def _code_name(context: grpc.aio.ServicerContext, error: BaseException | None) -> str:
    code: Any = None
    try:
        code = context.code()
    except Exception:  # pragma: no cover - defensive: older grpc without code()
        code = None
    if isinstance(code, grpc.StatusCode):
        return code.name
    if isinstance(code, int):
        for status in grpc.StatusCode:
            if status.value[0] == code:
                return status.name
    if error is None:
        return "OK"
    if isinstance(error, asyncio.CancelledError):
        return "CANCELLED"
    return "UNKNOWN"


class MetricsInterceptor(grpc.aio.ServerInterceptor):
    """Count started and handled RPCs (by status code) and time them."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        service, _, method = handler_call_details.method.lstrip("/").rpartition("/")
        if handler.unary_unary:
            kind, behavior, factory = "unary", handler.unary_unary, grpc.unary_unary_rpc_method_handler
        elif handler.unary_stream:
            kind, behavior, factory = "server_stream", handler.unary_stream, grpc.unary_stream_rpc_method_handler
        elif handler.stream_unary:
            kind, behavior, factory = "client_stream", handler.stream_unary, grpc.stream_unary_rpc_method_handler
        else:
            kind, behavior, factory = "bidi_stream", handler.stream_stream, grpc.stream_stream_rpc_method_handler
        labels = (kind, service, method)

        def finish(context: grpc.aio.ServicerContext, start: float, error: BaseException | None) -> None:
            HANDLED.labels(*labels, _code_name(context, error)).inc()
            HANDLING.labels(*labels).observe(time.perf_counter() - start)

        if inspect.isasyncgenfunction(behavior):

            async def wrapped_stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                STARTED.labels(*labels).inc()
                start = time.perf_counter()
                try:
                    async for item in behavior(request, context):
                        yield item
                except BaseException as exc:  # not kept in a local: see wrapped
                    finish(context, start, exc)
                    raise
                finish(context, start, None)

            new_behavior: Callable[..., Any] = wrapped_stream
        else:

            async def wrapped(request: Any, context: grpc.aio.ServicerContext) -> Any:
                STARTED.labels(*labels).inc()
                start = time.perf_counter()
                try:
                    result = behavior(request, context)
                    if inspect.isawaitable(result):
                        result = await result
                except BaseException as exc:
                    # Not kept in a local of this frame: the exception's traceback holds the frame, so a
                    # local holding the exception would make a cycle that keeps the call's whole state
                    # (request, context, the handler's frames) until a garbage collection.
                    finish(context, start, exc)
                    raise
                finish(context, start, None)
                return result

            new_behavior = wrapped
        return factory(
            new_behavior,
            request_deserializer=handler.request_deserializer,
            response_serializer=handler.response_serializer,
        )
