"""A deadline on every outbound gRPC call: a client interceptor and a channel factory."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import grpc

#: Seconds an outbound call may take when the caller gave no timeout.
DEFAULT_TIMEOUT = 5.0


class DeadlineInterceptor(
    grpc.aio.UnaryUnaryClientInterceptor,
    grpc.aio.UnaryStreamClientInterceptor,
):
    """Give every call without a timeout ``default_timeout`` seconds; never lengthen one."""

    def __init__(self, default_timeout: float = DEFAULT_TIMEOUT) -> None:
        if default_timeout <= 0:
            raise ValueError("default_timeout must be positive")
        self.default_timeout = default_timeout

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        if details.timeout is not None:
            return details
        return grpc.aio.ClientCallDetails(
            details.method, self.default_timeout, details.metadata,
            details.credentials, details.wait_for_ready,
        )

    async def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)

    async def intercept_unary_stream(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)


def insecure_channel(
    target: str,
    default_timeout: float = DEFAULT_TIMEOUT,
    interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
) -> grpc.aio.Channel:
    """An ``grpc.aio`` channel whose calls all carry a deadline."""
    return grpc.aio.insecure_channel(
        target, interceptors=[DeadlineInterceptor(default_timeout), *interceptors],
    )
