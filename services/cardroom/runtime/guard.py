"""The last line of the error model on every server: requests are decoded here, and what a servicer
did not expect never reaches the caller as UNKNOWN.

:class:`GuardInterceptor` (innermost of :func:`cardroom.runtime.server.serve`'s interceptors, so
the caller check runs before any byte is parsed) takes over each method's request deserializer:

* a request body that is not a valid protobuf of the method's request type (garbage bytes, bad
  UTF-8 in a string field, a truncated field) is INVALID_ARGUMENT with reason ``MALFORMED_REQUEST``
  and one INFO log line, not UNKNOWN with an ERROR traceback from grpc's deserializer;
* a :class:`~cardroom.runtime.errors.ServiceError` (or the core's rejections) raised by a servicer
  not wrapped with :func:`~cardroom.runtime.errors.rpc` keeps its status;
* any other exception is INTERNAL with a fixed message naming the method (never the exception's
  text, which may echo input or internals), logged once with its traceback for the operator.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

from cardroom.runtime import errors
from cardroom.runtime.handlers import shape

log = logging.getLogger("cardroom.runtime.guard")

MALFORMED_REQUEST = "MALFORMED_REQUEST"
UNEXPECTED = "INTERNAL"

Decode = Callable[[bytes], Any]


def type_name(decode: Decode | None) -> str:
    """The request message's full name (``cardroom.v1.EvaluateRequest``) from its ``FromString``."""
    owner = getattr(decode, "__self__", None)
    descriptor = getattr(owner, "DESCRIPTOR", None)
    return str(getattr(descriptor, "full_name", "request message"))


def malformed(method: str, decode: Decode | None, size: int) -> errors.ServiceError:
    return errors.invalid(
        f"request: the {size}-byte body of {method} is not a valid {type_name(decode)}", reason=MALFORMED_REQUEST
    )


def internal(method: str) -> errors.ServiceError:
    return errors.ServiceError(
        grpc.StatusCode.INTERNAL, f"{method} failed unexpectedly; the service logged it", reason=UNEXPECTED
    )


async def decode_or_abort(raw: Any, decode: Decode | None, method: str, context: grpc.aio.ServicerContext) -> Any:
    """``raw`` decoded with ``decode`` (as is without one), else the call ends INVALID_ARGUMENT."""
    if decode is None or not isinstance(raw, bytes | bytearray | memoryview):
        return raw
    try:
        return decode(bytes(raw))
    except Exception:  # noqa: BLE001 - every decoding failure is the caller's malformed body
        log.info("malformed request", extra={"method": method, "bytes": len(raw)})
        await errors.abort(context, malformed(method, decode, len(raw)))


async def contain(exc: Exception, method: str, context: grpc.aio.ServicerContext) -> None:
    """End the call for an exception that escaped the servicer (re-raises grpc's own aborts)."""
    if isinstance(exc, grpc.aio.AbortError):
        raise exc
    known = errors.as_service_error(exc)
    if known is not None:
        await errors.abort(context, known)
    log.error("unexpected error", extra={"method": method}, exc_info=exc)
    await errors.abort(context, internal(method))


class GuardInterceptor(grpc.aio.ServerInterceptor):
    """Decode requests (malformed → INVALID_ARGUMENT) and contain unexpected errors (→ INTERNAL)."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        decode: Decode | None = handler.request_deserializer
        streaming_request = bool(handler.stream_unary or handler.stream_stream)
        behavior, factory = shape(handler)

        async def requests_of(raw: Any, context: grpc.aio.ServicerContext) -> Any:
            if not streaming_request:
                return await decode_or_abort(raw, decode, method, context)

            async def decoded() -> AsyncIterator[Any]:
                async for item in raw:
                    yield await decode_or_abort(item, decode, method, context)

            return decoded()

        if inspect.isasyncgenfunction(behavior):

            async def guarded_stream(raw: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
                request = await requests_of(raw, context)
                try:
                    async for item in behavior(request, context):
                        yield item
                except Exception as exc:  # noqa: BLE001 - contained: a status, never UNKNOWN
                    await contain(exc, method, context)

            new_behavior: Callable[..., Any] = guarded_stream
        else:

            async def guarded(raw: Any, context: grpc.aio.ServicerContext) -> Any:
                request = await requests_of(raw, context)
                try:
                    result = behavior(request, context)
                    if inspect.isawaitable(result):
                        result = await result
                    return result
                except Exception as exc:  # noqa: BLE001 - contained: a status, never UNKNOWN
                    await contain(exc, method, context)

            new_behavior = guarded
        return factory(new_behavior, request_deserializer=None, response_serializer=handler.response_serializer)
