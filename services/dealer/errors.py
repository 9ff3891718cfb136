"""Dealer errors: each carries the gRPC status it maps to; a rejected command changes nothing."""

from __future__ import annotations

import grpc


class DealerError(Exception):
    """A rejected request with its status ``code`` and a clear ``message``."""

    def __init__(self, code: grpc.StatusCode, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def invalid(message: str) -> DealerError:
    return DealerError(grpc.StatusCode.INVALID_ARGUMENT, message)


def not_found(message: str) -> DealerError:
    return DealerError(grpc.StatusCode.NOT_FOUND, message)


def precondition(message: str) -> DealerError:
    return DealerError(grpc.StatusCode.FAILED_PRECONDITION, message)


def exists(message: str) -> DealerError:
    return DealerError(grpc.StatusCode.ALREADY_EXISTS, message)


def denied(message: str) -> DealerError:
    return DealerError(grpc.StatusCode.PERMISSION_DENIED, message)


def unavailable(message: str) -> DealerError:
    return DealerError(grpc.StatusCode.UNAVAILABLE, message)
