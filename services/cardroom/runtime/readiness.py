"""A server that serves before it is ready (issue 14 item 10: the dealer starts while Kafka is
down and restores its tables once the broker is back).

:func:`cardroom.runtime.server.serve` given a ``ready`` coroutine answers at once, and until the
coroutine has finished:

* health: :data:`LIVENESS` is SERVING (the process is up: Kubernetes' startup and liveness
  probes), while "" and the service's own names are NOT_SERVING (readiness: the process is not
  yet given traffic; ``make run`` and the test harness wait for "");
* every call of the service's own methods is UNAVAILABLE with reason :data:`STARTING` (retry
  shortly) — never an answer from half-restored state; health and reflection are served.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import grpc

from cardroom.runtime import errors
from cardroom.runtime.handlers import checked_first

#: The health-check name that is SERVING from the moment the server starts until it shuts down.
LIVENESS = "liveness"
STARTING = "STARTING"
ALWAYS_SERVED = ("/grpc.health.v1.Health/", "/grpc.reflection.")


class Readiness:
    """Whether the servicers may answer yet."""

    def __init__(self, service: str) -> None:
        self.service = service
        self.ready = False

    async def refuse_until_ready(self, context: grpc.aio.ServicerContext) -> None:
        if not self.ready:
            await errors.abort(
                context,
                errors.unavailable(f"{self.service} is starting (restoring its state); retry shortly", STARTING),
            )


class ReadinessInterceptor(grpc.aio.ServerInterceptor):
    """UNAVAILABLE for the service's methods while :class:`Readiness` is not ready."""

    def __init__(self, readiness: Readiness) -> None:
        self.readiness = readiness

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None or self.readiness.ready or handler_call_details.method.startswith(ALWAYS_SERVED):
            return handler
        return checked_first(handler, self.readiness.refuse_until_ready)
