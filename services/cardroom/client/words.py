"""Errors in words for a person: the reason said plainly, no gRPC status names, no internal
account ids (``player_cash:ann:cash`` -> "your cash account")."""

from __future__ import annotations

import re
from typing import Any

import grpc

from cardroom.runtime.errors import in_words, reason_of

#: What a status means to a player when the service gave no reason.
CODE_WORDS = {
    "INVALID_ARGUMENT": "not understood",
    "FAILED_PRECONDITION": "not possible now",
    "NOT_FOUND": "not found",
    "ALREADY_EXISTS": "already done",
    "PERMISSION_DENIED": "not allowed",
    "UNAUTHENTICATED": "please log in again",
    "RESOURCE_EXHAUSTED": "too many requests: slow down",
    "UNAVAILABLE": "the card room cannot be reached just now; try again",
    "DEADLINE_EXCEEDED": "no answer in time; try again",
    "ABORTED": "stopped",
    "OUT_OF_RANGE": "out of range",
    "INTERNAL": "something went wrong at the card room",
    "UNKNOWN": "something went wrong",
    "CANCELLED": "cancelled",
    "UNIMPLEMENTED": "not available",
}
_ACCOUNT = re.compile(
    r"\b(player_cash|player_play|table_escrow|house_rake|tournament_prize_pool|tournament_fees"
    r"|external):([A-Za-z0-9_.\-]+):(cash|play)\b"
)
_MONEY = {"cash": "cash", "play": "play-money"}
_STATUS = re.compile(r"\b(" + "|".join(CODE_WORDS) + r")\b:?\s*")


def _account(match: re.Match[str], me: str) -> str:
    kind, owner, currency = match.group(1), match.group(2), _MONEY[match.group(3)]
    if kind.startswith("player"):
        return f"your {currency} account" if owner == me or not me else f"{owner}'s {currency} account"
    if kind == "table_escrow":
        return "the table's chips"
    if kind.startswith("tournament"):
        return "the tournament's account"
    return f"the card room's {currency} account"


def plain(message: str, me: str = "") -> str:
    """``message`` without account ids or status names."""
    text = _ACCOUNT.sub(lambda m: _account(m, me), message)
    text = _STATUS.sub("", text).replace("()", "")
    return re.sub(r"\s+", " ", text).strip()


def for_people(code: str, reason: str, message: str, me: str = "") -> str:
    """One line for a person: the reason in words, then what the service said, plainly."""
    head = in_words(reason) if reason and reason != code else CODE_WORDS.get(code, "refused")
    text = plain(message, me)
    if not text or text.lower() == head:
        return head
    return f"{head}: {text}"


def error_words(err: grpc.RpcError, me: str = "") -> str:
    """A failed call in words (:func:`for_people`)."""
    code: Any = err.code() if hasattr(err, "code") else None
    name = code.name if isinstance(code, grpc.StatusCode) else "UNKNOWN"
    details: Any = err.details() if hasattr(err, "details") else ""
    return for_people(name, reason_of(err), details or "", me)
