"""A deadline on every outbound gRPC call: a client interceptor and THE channel factory.

:func:`channel` is how every service dials another: with ``TLS_DIR`` set it is a mutual-TLS channel
presenting the service's own certificate (see :mod:`cardroom.runtime.trust`), else plaintext.
``insecure_channel`` is the old name, kept for callers written before TLS (it is the same factory).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import grpc

from cardroom.runtime.keepalive import channel_options
from cardroom.runtime.trust import TlsFiles, channel_credentials, tls_from_env

#: Seconds an outbound call may take when the caller gave no timeout.
DEFAULT_TIMEOUT = 5.0


class DeadlineInterceptor(grpc.aio.UnaryUnaryClientInterceptor, grpc.aio.UnaryStreamClientInterceptor):
    """Give every call without a timeout ``default_timeout`` seconds; never lengthen one."""

    def __init__(self, default_timeout: float = DEFAULT_TIMEOUT) -> None:
        if default_timeout <= 0:
            raise ValueError("default_timeout must be positive")
        self.default_timeout = default_timeout

    def _details(self, details: grpc.aio.ClientCallDetails) -> grpc.aio.ClientCallDetails:
        if details.timeout is not None:
            return details
        return grpc.aio.ClientCallDetails(
            details.method, self.default_timeout, details.metadata, details.credentials, details.wait_for_ready
        )

    async def intercept_unary_unary(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)

    async def intercept_unary_stream(self, continuation: Callable[..., Any], details: Any, request: Any) -> Any:
        return await continuation(self._details(details), request)


#: ``tls`` default of :func:`channel`: the service's own certificate from ``$TLS_DIR``.
FROM_ENV = "env"

#: Reconnect back-off of every channel between services: gRPC's default (1 s growing by 1.6x up to
#: 120 s) left the dealer ~13 s without its evaluator after the evaluator restarted (issue 14 item
#: 14); a peer on the same cluster is retried from 0.2 s up to every 2 s.
RECONNECT_OPTIONS: tuple[tuple[str, int], ...] = (
    ("grpc.initial_reconnect_backoff_ms", 200),
    ("grpc.min_reconnect_backoff_ms", 200),
    ("grpc.max_reconnect_backoff_ms", 2000),
)


def channel(
    target: str,
    default_timeout: float = DEFAULT_TIMEOUT,
    interceptors: Sequence[grpc.aio.ClientInterceptor] = (),
    tls: TlsFiles | None | str = FROM_ENV,
    server_name: str = "",
) -> grpc.aio.Channel:
    """An ``grpc.aio`` channel whose calls all carry a deadline; mutual TLS with ``tls`` (by default
    the certificate in ``$TLS_DIR``; None: plaintext). ``server_name``: the name the server's
    certificate must carry when ``target`` is an address it does not name (a dealer replica's own
    address from the directory: its certificate names the service, ``dealer``)."""
    files = tls_from_env() if tls == FROM_ENV else tls
    chain = [DeadlineInterceptor(default_timeout), *interceptors]
    if isinstance(files, TlsFiles):
        options: list[tuple[str, int | str]] = [*RECONNECT_OPTIONS, *channel_options()]
        if server_name:
            options.append(("grpc.ssl_target_name_override", server_name))
        return grpc.aio.secure_channel(target, channel_credentials(files), options=options, interceptors=chain)
    return grpc.aio.insecure_channel(target, options=[*RECONNECT_OPTIONS, *channel_options()], interceptors=chain)


#: The factory's name before TLS (callers in the services use it): the same factory.
insecure_channel = channel
