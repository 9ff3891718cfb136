"""Wrapping a gRPC method handler, shared by the server interceptors (:mod:`.trust`,
:mod:`.readiness`, :mod:`.guard`): which of the four call shapes it is, and a handler that runs a
check before the servicer."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import grpc

Factory = Callable[..., grpc.RpcMethodHandler]
Check = Callable[[grpc.aio.ServicerContext], Awaitable[None]]


def shape(handler: grpc.RpcMethodHandler) -> tuple[Callable[..., Any], Factory]:
    """The handler's behaviour and the ``grpc.*_rpc_method_handler`` factory of its shape."""
    if handler.unary_unary:
        return handler.unary_unary, grpc.unary_unary_rpc_method_handler
    if handler.unary_stream:
        return handler.unary_stream, grpc.unary_stream_rpc_method_handler
    if handler.stream_unary:
        return handler.stream_unary, grpc.stream_unary_rpc_method_handler
    return handler.stream_stream, grpc.stream_stream_rpc_method_handler


def checked_first(handler: grpc.RpcMethodHandler, check: Check) -> grpc.RpcMethodHandler:
    """``handler`` with ``check(context)`` awaited before its behaviour (the check aborts the call
    to refuse it)."""
    behavior, factory = shape(handler)
    if inspect.isasyncgenfunction(behavior):

        async def checked_stream(request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            await check(context)
            async for item in behavior(request, context):
                yield item

        new_behavior: Callable[..., Any] = checked_stream
    else:

        async def checked(request: Any, context: grpc.aio.ServicerContext) -> Any:
            await check(context)
            result = behavior(request, context)
            if inspect.isawaitable(result):
                result = await result
            return result

        new_behavior = checked
    return factory(
        new_behavior, request_deserializer=handler.request_deserializer, response_serializer=handler.response_serializer
    )
