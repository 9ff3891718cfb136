"""Dealer errors are the runtime's one error model (:mod:`cardroom.runtime.errors`): a rejected
command raises a :class:`ServiceError` (status code, clear message, reason) and changes nothing."""

from __future__ import annotations

from cardroom.runtime.errors import (
    ServiceError as DealerError,
    denied,
    exists,
    invalid,
    not_found,
    precondition,
    unavailable,
)

__all__ = ["DealerError", "denied", "exists", "invalid", "not_found", "precondition", "unavailable"]
