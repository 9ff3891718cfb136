"""Run a ``grpc.aio`` server with health, reflection and metrics until SIGTERM or SIGINT."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import signal
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection

from cardroom.runtime import looplag
from cardroom.runtime.collector import freeze_start_up, set_thresholds, time_pauses
from cardroom.runtime.config import ServiceConfig
from cardroom.runtime.guard import GuardInterceptor
from cardroom.runtime.keepalive import server_options
from cardroom.runtime.metrics import MetricsInterceptor, start_metrics_server
from cardroom.runtime.production import verify_production
from cardroom.runtime.readiness import LIVENESS, Readiness, ReadinessInterceptor
from cardroom.runtime.trust import CallerInterceptor, is_internal, server_credentials, tls_from_env

log = logging.getLogger("cardroom.runtime")


@dataclass(frozen=True)
class Registration:
    """One gRPC service to serve: its full name (``cardroom.v1.Wallet``) and how to add it."""

    full_name: str
    add: Callable[[Any, grpc.aio.Server], None]
    servicer: Any


def short_name(full_name: str) -> str:
    """``cardroom.v1.ConnectionMonitor`` -> ``connection_monitor``."""
    last = full_name.rsplit(".", 1)[-1]
    return "".join(f"_{c.lower()}" if c.isupper() and i else c.lower() for i, c in enumerate(last))


def health_names(service: str, full_names: Sequence[str]) -> list[str]:
    """The names health answers for: "", the service's own name (``evaluator``), and each gRPC
    service by its full and its short name."""
    names = ["", service] if service else [""]
    for full in full_names:
        names += [full, short_name(full)]
    return list(dict.fromkeys(names))


async def _logged(hook: Callable[[], Awaitable[None]]) -> None:
    try:
        await hook()
    except Exception:
        log.exception("drain hook failed")


async def serve(
    config: ServiceConfig,
    registrations: Sequence[Registration],
    on_stop: Sequence[Callable[[], Awaitable[None]]] = (),
    on_drain: Callable[[], Awaitable[None]] | None = None,
    ready: Callable[[], Awaitable[None]] | None = None,
) -> None:
    """Serve until SIGTERM/SIGINT; then report NOT_SERVING, wait ``shutdown_delay`` (and, while
    still serving calls, for ``on_drain``: the dealer lets its hands in progress finish), stop with
    ``shutdown_grace`` for in-flight calls, and run the ``on_stop`` hooks in order; a hook that fails
    is logged and the next one still runs.

    With ``TLS_DIR`` set, a server of internal services listens with mutual TLS and lets through only
    the callers :data:`cardroom.runtime.trust.GRANTS` names; a server of public services only (the
    gateway) keeps its plain port (``TLS_DIR`` is then its client certificate). Every server decodes
    requests through :class:`~cardroom.runtime.guard.GuardInterceptor` (a malformed body is
    INVALID_ARGUMENT, an unexpected error INTERNAL, never UNKNOWN). In production mode
    (:mod:`cardroom.runtime.production`) a service without its certificate or secrets does not start.

    With ``ready`` the server serves at once but is only live, not ready, until the coroutine has
    finished (:mod:`cardroom.runtime.readiness`); if it fails, the process stops with an error."""
    verify_production(config.name)
    set_thresholds()
    time_pauses()
    lag = looplag.start()  # (a bad LOOP_LAG_PERIOD stops the service here, before it binds)
    names = [reg.full_name for reg in registrations]
    tls = tls_from_env()
    mutual = tls is not None and is_internal(names)
    interceptors: list[grpc.aio.ServerInterceptor] = [MetricsInterceptor()]
    if mutual:
        interceptors.append(CallerInterceptor())
    readiness = Readiness(config.name)
    readiness.ready = ready is None
    if ready is not None:
        interceptors.append(ReadinessInterceptor(readiness))
    interceptors.append(GuardInterceptor())  # innermost: callers are checked before a byte is decoded
    server = grpc.aio.server(interceptors=interceptors, options=server_options())  # finds vanished peers
    health_servicer = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(health_servicer, server)
    for reg in registrations:
        reg.add(reg.servicer, server)
    reflection.enable_server_reflection(
        [*names, health_pb2.DESCRIPTOR.services_by_name["Health"].full_name, reflection.SERVICE_NAME], server
    )
    if mutual:
        assert tls is not None
        port = server.add_secure_port(config.grpc_address, server_credentials(tls))
    else:
        port = server.add_insecure_port(config.grpc_address)
    if port == 0:
        raise SystemExit(f"{config.name}: cannot bind gRPC to {config.grpc_address}")
    if config.metrics_port:
        start_metrics_server(config.host, config.metrics_port)
    await server.start()
    await health_servicer.set(LIVENESS, health_pb2.HealthCheckResponse.SERVING)

    async def become_ready() -> None:
        if ready is not None:
            await ready()
        freeze_start_up()  # what starting made (restored tables too): no full collection walks it again
        readiness.ready = True
        for name in health_names(config.name, names):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.SERVING)

    if ready is None:
        await become_ready()
    else:
        for name in health_names(config.name, names):
            await health_servicer.set(name, health_pb2.HealthCheckResponse.NOT_SERVING)

    stopping = asyncio.Event()
    failed: list[BaseException] = []
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    starting = None if ready is None else asyncio.create_task(become_ready())
    if starting is not None:

        def started(task: asyncio.Task[None]) -> None:
            if not task.cancelled() and task.exception() is not None:
                failed.append(task.exception())  # type: ignore[arg-type]
                log.error("start-up failed", exc_info=task.exception())
                stopping.set()

        starting.add_done_callback(started)
    log.info(
        "serving",
        extra={
            "grpc": f"{config.host}:{port}",
            "mtls": mutual,
            "identity": tls.identity if tls is not None else None,
            "metrics": f"http://{config.host}:{config.metrics_port}/metrics",
        },
    )
    await stopping.wait()
    if starting is not None and not starting.done():
        starting.cancel()
        with contextlib.suppress(BaseException):
            await starting

    log.info("shutting down", extra={"grace_s": config.shutdown_grace})
    await health_servicer.enter_graceful_shutdown()
    draining = [asyncio.sleep(config.shutdown_delay)]
    if on_drain is not None:
        draining.append(_logged(on_drain))
    await asyncio.gather(*draining)
    await server.stop(config.shutdown_grace)
    for hook in on_stop:
        try:
            await hook()
        except Exception:
            log.exception("shutdown hook failed")
    await looplag.stop(lag)
    log.info("stopped")
    if failed:
        raise SystemExit(f"{config.name}: start-up failed: {failed[0]!r}")
