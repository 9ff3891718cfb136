"""The one error model of the services: a rejected request is a :class:`ServiceError` (status
code, clear message, machine-readable reason, field violations), sent as a gRPC status with
rich details (``google.rpc.ErrorInfo`` carrying the reason, ``google.rpc.BadRequest`` the field
violations) through grpcio-status. :data:`REASON_STATUS` is the one table from the rules core's
:class:`Reason` to status codes.

Servicers raise :class:`ServiceError` (or the core's :class:`IllegalAction` / :class:`InvalidId`)
and wrap their methods with :func:`rpc`; clients read the reason back with :func:`reason_of`
and print it with :func:`describe`.

Echoed input is clipped here, in one place, for every service: the status travels in HTTP/2
trailers (``grpc-message``, percent-encoded, and ``grpc-status-details-bin``, base64), and a 20 KB
bad id echoed in a message would exceed the client's metadata limit (8 KB soft, 16 KB hard) and
arrive as RESOURCE_EXHAUSTED instead of INVALID_ARGUMENT. Limits are in UTF-8 *bytes* (a character
can take four, and each byte outside printable ASCII three in ``grpc-message``): the message at most
:data:`MAX_MESSAGE`, each field path, violation description, reason and metadata entry at most
:data:`MAX_FIELD`, and the whole rich status at most :data:`MAX_STATUS` (violations and metadata
beyond it are left out), so every status's trailers stay under 6 KB whatever the request held.
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import re
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, NoReturn, TypeVar

import grpc
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from cardroom.core.engine.errors import IllegalAction, Reason
from cardroom.core.ids import InvalidId

#: ``ErrorInfo.domain`` of every Cardroom error.
DOMAIN = "cardroom"
#: Longest message (UTF-8 bytes) a status carries; longer ones are cut.
MAX_MESSAGE = 800
#: Longest field path, violation description, reason, metadata key and value (UTF-8 bytes).
MAX_FIELD = 200
#: Largest serialized ``google.rpc.Status`` (message and details); what does not fit is left out.
MAX_STATUS = 2000
DETAILS_KEY = rpc_status.GRPC_DETAILS_METADATA_KEY

#: The one table from the rules core's reasons to gRPC status codes. Every rejection of an
#: action depends on the hand's state (whose turn, the bet to call, the cards held), hence
#: FAILED_PRECONDITION; only a set-up that can never make a hand is INVALID_ARGUMENT.
REASON_STATUS: dict[Reason, grpc.StatusCode] = {
    Reason.HAND_OVER: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.OUT_OF_TURN: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.NOT_LEGAL_NOW: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.AMOUNT_REQUIRED: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.AMOUNT_BELOW_MINIMUM: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.AMOUNT_ABOVE_MAXIMUM: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.WRONG_LIMIT_AMOUNT: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.CAPPED: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.RAISE_NOT_REOPENED: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.TOO_MANY_DISCARDS: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.CARD_NOT_HELD: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.DUPLICATE_CARD: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.NO_MONEY_IN_POT: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.NOT_WHOLE_CHIPS: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.BAD_SETUP: grpc.StatusCode.INVALID_ARGUMENT,
    # table commands (Table.verify_*): the request names something that exists already, is not
    # there, or is malformed; the rest depend on the table's state
    Reason.TABLE_CLOSED: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.SEAT_OUT_OF_RANGE: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.SEAT_TAKEN: grpc.StatusCode.ALREADY_EXISTS,
    Reason.SEAT_EMPTY: grpc.StatusCode.NOT_FOUND,
    Reason.ALREADY_SEATED: grpc.StatusCode.ALREADY_EXISTS,
    Reason.TABLE_FULL: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.AMOUNT_NOT_POSITIVE: grpc.StatusCode.INVALID_ARGUMENT,
    Reason.BUY_IN_BELOW_MINIMUM: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.BUY_IN_ABOVE_MAXIMUM: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.IN_HAND: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.NOT_SITTING_OUT: grpc.StatusCode.FAILED_PRECONDITION,
    Reason.NO_HAND_IN_PROGRESS: grpc.StatusCode.FAILED_PRECONDITION,
}

#: Reasons of the services themselves (``ErrorInfo.reason``), beside the core's.
INVALID_ID = "INVALID_ID"
RATE_LIMITED = "RATE_LIMITED"
TOKEN_MISSING = "TOKEN_MISSING"
TOKEN_INVALID = "TOKEN_INVALID"
OTHER_PLAYER = "OTHER_PLAYER"
OPERATOR_ONLY = "OPERATOR_ONLY"
BACKEND_UNAVAILABLE = "BACKEND_UNAVAILABLE"

_FIELD = re.compile(r"[a-z_][a-z0-9_]*(?:\[\d+\])?(?:\.[a-z_][a-z0-9_]*(?:\[\d+\])?)*")


def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` bytes of UTF-8 (never inside a character), saying how long
    it was. A limit under 40 bytes leaves only the note."""
    encoded = text.encode("utf-8", "backslashreplace")
    if len(encoded) <= limit:
        return text
    head = encoded[: max(0, limit - 40)].decode("utf-8", "ignore")
    return f"{head}... (cut, {len(text)} characters)"


def _size(text: str) -> int:
    return len(text.encode("utf-8", "backslashreplace"))


T = TypeVar("T")


def _fitting(items: Sequence[T], cost: Callable[[T], int], budget: int) -> list[T]:
    """The leading ``items`` whose costs add up to at most ``budget``."""
    kept: list[T] = []
    for item in items:
        budget -= cost(item)
        if budget < 0:
            break
        kept.append(item)
    return kept


@dataclass(frozen=True, slots=True)
class FieldViolation:
    """One bad request field (``google.rpc.BadRequest.FieldViolation``)."""

    field: str
    description: str


class ServiceError(Exception):
    """A rejected request; nothing was changed. ``reason`` is UPPER_SNAKE_CASE (the core's
    :class:`Reason` name, a service reason above, or the status code's name by default)."""

    def __init__(
        self,
        code: grpc.StatusCode,
        message: str,
        *,
        reason: str = "",
        violations: Iterable[FieldViolation] = (),
        metadata: dict[str, str] | None = None,
    ) -> None:
        self.code = code
        self.message = clip(message, MAX_MESSAGE)
        super().__init__(self.message)
        self.reason = clip(reason or code.name, MAX_FIELD)
        violations = [FieldViolation(clip(v.field, MAX_FIELD), clip(v.description, MAX_FIELD)) for v in violations]
        entries = {clip(k, MAX_FIELD): clip(v, MAX_FIELD) for k, v in (metadata or {}).items()}
        # Keep what fits in MAX_STATUS, first come first kept (the message and reason always fit).
        budget = MAX_STATUS - 200 - _size(self.message) - _size(self.reason)
        self.violations = tuple(_fitting(violations, lambda v: _size(v.field) + _size(v.description) + 16, budget))
        budget -= sum(_size(v.field) + _size(v.description) + 16 for v in self.violations)
        kept = _fitting(list(entries.items()), lambda kv: _size(kv[0]) + _size(kv[1]) + 16, budget)
        self.metadata = dict(kept)

    def to_status_proto(self) -> status_pb2.Status:
        info = error_details_pb2.ErrorInfo(reason=self.reason, domain=DOMAIN, metadata=self.metadata)
        status = status_pb2.Status(code=self.code.value[0], message=self.message)
        status.details.add().Pack(info)
        if self.violations:
            bad = error_details_pb2.BadRequest(
                field_violations=[
                    error_details_pb2.BadRequest.FieldViolation(field=v.field, description=v.description)
                    for v in self.violations
                ]
            )
            status.details.add().Pack(bad)
        return status

    def to_status(self) -> grpc.Status:
        return rpc_status.to_status(self.to_status_proto())

    def __repr__(self) -> str:
        return f"ServiceError({self.code.name}, {self.message!r}, reason={self.reason!r})"


def field_of(message: str) -> str | None:
    """The field a "field: problem" message names (the services' convention), else None."""
    head, sep, _ = message.partition(": ")
    return head if sep and _FIELD.fullmatch(head) else None


def _error(code: grpc.StatusCode, message: str, reason: str = "", field: str | None = None) -> ServiceError:
    violations = []
    if code == grpc.StatusCode.INVALID_ARGUMENT:  # BadRequest details belong to INVALID_ARGUMENT only
        field = field if field is not None else field_of(message)
        if field:
            violations.append(FieldViolation(field, message.removeprefix(f"{field}: ")))
    return ServiceError(code, message, reason=reason, violations=violations)


def invalid(message: str, reason: str = "", field: str | None = None) -> ServiceError:
    """INVALID_ARGUMENT; the field ("field: problem") becomes a BadRequest violation."""
    return _error(grpc.StatusCode.INVALID_ARGUMENT, message, reason, field)


def not_found(message: str, reason: str = "") -> ServiceError:
    return _error(grpc.StatusCode.NOT_FOUND, message, reason)


def precondition(message: str, reason: str = "") -> ServiceError:
    return _error(grpc.StatusCode.FAILED_PRECONDITION, message, reason)


def exists(message: str, reason: str = "") -> ServiceError:
    return _error(grpc.StatusCode.ALREADY_EXISTS, message, reason)


def denied(message: str, reason: str = "") -> ServiceError:
    return _error(grpc.StatusCode.PERMISSION_DENIED, message, reason)


def unauthenticated(message: str, reason: str = "") -> ServiceError:
    return _error(grpc.StatusCode.UNAUTHENTICATED, message, reason)


def unavailable(message: str, reason: str = "") -> ServiceError:
    return _error(grpc.StatusCode.UNAVAILABLE, message, reason)


def exhausted(message: str, reason: str = "") -> ServiceError:
    return _error(grpc.StatusCode.RESOURCE_EXHAUSTED, message, reason)


def from_illegal(exc: IllegalAction) -> ServiceError:
    """The core's rejection of an action, with its reason and the table's status code."""
    return ServiceError(REASON_STATUS[exc.reason], exc.message, reason=exc.reason.name)


def from_invalid_id(exc: InvalidId) -> ServiceError:
    return ServiceError(
        grpc.StatusCode.INVALID_ARGUMENT,
        str(exc),
        reason=INVALID_ID,
        violations=[FieldViolation(exc.field, exc.message)],
    )


def as_service_error(exc: BaseException) -> ServiceError | None:
    """``exc`` as a :class:`ServiceError` when it is a rejection the model knows, else None."""
    if isinstance(exc, ServiceError):
        return exc
    if isinstance(exc, IllegalAction):
        return from_illegal(exc)
    if isinstance(exc, InvalidId):
        return from_invalid_id(exc)
    return None


class CallEnded(asyncio.CancelledError):
    """The call ended before its handler could answer it: its caller gave up (its deadline passed, or it
    cancelled) while the handler was on its way to the answer — typically a call forwarded with the
    caller's deadline fails with DEADLINE_EXCEEDED a moment before grpc cancels the handler. A
    ``CancelledError``: grpc takes it as the cancelled call it is (no status to send, nothing logged),
    and no ``except Exception`` on the way mistakes it for a failure of the service."""


async def abort(context: grpc.aio.ServicerContext, error: ServiceError) -> NoReturn:
    """End the call with ``error``'s status and rich details; :class:`CallEnded` when the call ended
    already (grpc then refuses to send a status: ``ExecuteBatchError``, an ``InternalError``; its
    ``cancelled()`` is not yet set, so it cannot be asked before)."""
    status = error.to_status()
    try:
        await context.abort(status.code, status.details, status.trailing_metadata)
    except grpc.aio.InternalError:  # ExecuteBatchError: the status could not be sent, the call is over
        raise CallEnded(f"{status.code.name} not sent: the call had ended") from None
    raise AssertionError("unreachable: abort raises")  # pragma: no cover


async def abort_refused(context: grpc.aio.ServicerContext, exc: BaseException) -> NoReturn:
    """End the call with the status of ``exc``, a rejection :func:`as_service_error` knows. Called from
    the handler's ``except`` clause, so that no local of the handler's frame holds the exception: its
    traceback holds that frame, and the cycle would keep the call's state until a garbage collection."""
    error = as_service_error(exc)
    assert error is not None, f"not a rejection: {exc!r}"
    await abort(context, error)


F = TypeVar("F", bound=Callable[..., Any])


def rpc(method: F) -> F:
    """Wrap a servicer method (unary or streaming): a :class:`ServiceError`, :class:`IllegalAction`
    or :class:`InvalidId` raised inside ends the call with that status and rich details."""
    if inspect.isasyncgenfunction(method):

        @functools.wraps(method)
        async def stream(self: Any, request: Any, context: grpc.aio.ServicerContext) -> AsyncIterator[Any]:
            try:
                async for item in method(self, request, context):
                    yield item
            except (ServiceError, IllegalAction, InvalidId) as exc:
                await abort_refused(context, exc)

        return stream  # type: ignore[return-value]

    @functools.wraps(method)
    async def unary(self: Any, request: Any, context: grpc.aio.ServicerContext) -> Any:
        try:
            return await method(self, request, context)
        except (ServiceError, IllegalAction, InvalidId) as exc:
            await abort_refused(context, exc)

    return unary  # type: ignore[return-value]


# ------------------------------------------------------------------ the client side


def status_of(err: grpc.RpcError) -> status_pb2.Status | None:
    """The rich status a failed call carried in its trailers, if any."""
    trailers: Any = err.trailing_metadata() if hasattr(err, "trailing_metadata") else None
    for key, value in trailers or ():
        if key == DETAILS_KEY and isinstance(value, bytes):
            try:
                return status_pb2.Status.FromString(value)
            except Exception:  # noqa: BLE001 - a malformed trailer is no rich status
                return None
    return None


def _reason(status: status_pb2.Status | None) -> str:
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return info.reason
    return ""


def _violations(status: status_pb2.Status | None) -> list[FieldViolation]:
    out: list[FieldViolation] = []
    for detail in status.details if status is not None else ():
        bad = error_details_pb2.BadRequest()
        if detail.Unpack(bad):
            out.extend(FieldViolation(v.field, v.description) for v in bad.field_violations)
    return out


def reason_of(err: grpc.RpcError) -> str:
    """``ErrorInfo.reason`` of a failed call ("" when it carried none)."""
    return _reason(status_of(err))


def violations_of(err: grpc.RpcError) -> list[FieldViolation]:
    return _violations(status_of(err))


_CODES = {code.value[0]: code for code in grpc.StatusCode}


def error_from_status(status: status_pb2.Status) -> ServiceError:
    """A refusal carried as a ``google.rpc.Status`` in a message (a table feed's answer to an action)
    as the :class:`ServiceError` a failed call with that status would give (code, reason, violations)."""
    code = _CODES.get(status.code, grpc.StatusCode.UNKNOWN)
    return ServiceError(code, status.message or code.name, reason=_reason(status), violations=_violations(status))


def in_words(reason: str) -> str:
    """``"OUT_OF_TURN"`` -> ``"out of turn"``."""
    return reason.replace("_", " ").lower()


def describe(code: str, reason: str, message: str) -> str:
    """One line for a person: ``"out of turn (FAILED_PRECONDITION): not your turn ..."``."""
    head = f"{in_words(reason)} ({code})" if reason and reason != code else code
    return f"{head}: {message}" if message else head


def describe_error(err: grpc.RpcError) -> str:
    code: Any = err.code() if hasattr(err, "code") else None
    name = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
    details: Any = err.details() if hasattr(err, "details") else ""
    return describe(name, reason_of(err), details or "")


def error_from_call(err: grpc.RpcError, prefix: str = "") -> ServiceError:
    """A backend's failure as our own :class:`ServiceError` (code, reason and violations kept)."""
    code: Any = err.code() if hasattr(err, "code") else grpc.StatusCode.UNKNOWN
    if not isinstance(code, grpc.StatusCode):
        code = grpc.StatusCode.UNKNOWN
    details: Any = err.details() if hasattr(err, "details") else ""
    message = f"{prefix}{details or code.name}"
    return ServiceError(code, message, reason=reason_of(err), violations=violations_of(err))
