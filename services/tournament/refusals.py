"""The core's refusals (:class:`TournamentError` messages from :mod:`cardroom.core.tournament`)
as precise gRPC statuses with an ``ErrorInfo.reason`` (tournament.proto's table)."""

from __future__ import annotations

import grpc

from cardroom.core.tournament import TournamentError
from cardroom.runtime.errors import ServiceError

#: (message fragment, status, reason) — the first match wins.
_RULES: tuple[tuple[str, grpc.StatusCode, str], ...] = (
    ("already registered", grpc.StatusCode.ALREADY_EXISTS, "ALREADY_REGISTERED"),
    ("is not registered", grpc.StatusCode.NOT_FOUND, "NOT_REGISTERED"),
    ("the tournament is full", grpc.StatusCode.FAILED_PRECONDITION, "TOURNAMENT_FULL"),
    ("every table is full", grpc.StatusCode.FAILED_PRECONDITION, "TOURNAMENT_FULL"),
    ("late registration is over", grpc.StatusCode.FAILED_PRECONDITION, "REGISTRATION_CLOSED"),
    ("registration is closed", grpc.StatusCode.FAILED_PRECONDITION, "REGISTRATION_CLOSED"),
    ("unregistration deadline", grpc.StatusCode.FAILED_PRECONDITION, "UNREGISTER_DEADLINE_PASSED"),
    ("has started", grpc.StatusCode.FAILED_PRECONDITION, "UNREGISTER_DEADLINE_PASSED"),
    ("seat won in a satellite", grpc.StatusCode.FAILED_PRECONDITION, "UNREGISTER_NOT_ALLOWED"),
    ("tournament is over", grpc.StatusCode.FAILED_PRECONDITION, "TOURNAMENT_OVER"),
)
_BY_OP = {
    "rebuy": "REBUY_NOT_ALLOWED",
    "add_on": "ADD_ON_NOT_ALLOWED",
    "register": "REGISTRATION_CLOSED",
    "unregister": "UNREGISTER_NOT_ALLOWED",
    "cancel": "TOURNAMENT_OVER",
}


def refusal(exc: TournamentError, op: str) -> ServiceError:
    message = str(exc)
    if op not in ("rebuy", "add_on") or "is not registered" in message:
        for fragment, code, reason in _RULES:
            if fragment in message:
                return ServiceError(code, message, reason=reason)
    return ServiceError(grpc.StatusCode.FAILED_PRECONDITION, message, reason=_BY_OP.get(op, "FAILED_PRECONDITION"))


__all__ = ["refusal"]
