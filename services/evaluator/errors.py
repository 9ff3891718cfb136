"""Bad evaluator input: a field name and a message, reported as INVALID_ARGUMENT with the field
as a ``BadRequest`` violation (the runtime's error model)."""

from __future__ import annotations

import grpc

from cardroom.runtime.errors import FieldViolation, ServiceError, invalid


class BadRequest(ServiceError, ValueError):
    def __init__(self, field: str, message: str) -> None:
        super().__init__(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{field}: {message}",
            reason="BAD_REQUEST",
            violations=[FieldViolation(field, message)],
        )
        self.field = field


def bad_input(err: ValueError) -> ServiceError:
    """A :class:`BadRequest` as it is; any other ``ValueError`` of the core (a card that does not
    parse, an impossible deal) as INVALID_ARGUMENT."""
    return err if isinstance(err, BadRequest) else invalid(str(err), reason="BAD_REQUEST")
