"""Ledger rules with no storage: account ids, which transfer kinds may move money where,
request validation, and the errors the service turns into gRPC statuses."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from cardroom.v1 import common_pb2, wallet_pb2

AK = wallet_pb2.AccountKind
TK = wallet_pb2.TransferKind

#: Slugs used inside account ids, e.g. ``player_cash:alice:cash``.
KIND_SLUG: dict[int, str] = {
    AK.ACCOUNT_KIND_PLAYER_CASH: "player_cash",
    AK.ACCOUNT_KIND_PLAYER_PLAY: "player_play",
    AK.ACCOUNT_KIND_TABLE_ESCROW: "table_escrow",
    AK.ACCOUNT_KIND_HOUSE_RAKE: "house_rake",
    AK.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL: "tournament_prize_pool",
    AK.ACCOUNT_KIND_TOURNAMENT_FEES: "tournament_fees",
    AK.ACCOUNT_KIND_EXTERNAL: "external",
}
SLUG_KIND = {slug: kind for kind, slug in KIND_SLUG.items()}
CURRENCY_SLUG: dict[int, str] = {common_pb2.CURRENCY_CASH: "cash", common_pb2.CURRENCY_PLAY: "play"}
SLUG_CURRENCY = {slug: cur for cur, slug in CURRENCY_SLUG.items()}

HOUSE = "house"
#: House money: accounts of these kinds belong to the house (owner ``house``) and no one else.
HOUSE_KINDS = frozenset({AK.ACCOUNT_KIND_HOUSE_RAKE, AK.ACCOUNT_KIND_TOURNAMENT_FEES})
PLAYER_KINDS = frozenset({AK.ACCOUNT_KIND_PLAYER_CASH, AK.ACCOUNT_KIND_PLAYER_PLAY})
#: Accounts that may go below zero (money entering or leaving the system).
MAY_GO_NEGATIVE = frozenset({AK.ACCOUNT_KIND_EXTERNAL})
#: House money that may fund a guarantee's overlay (and takes back what a cancellation leaves).
HOUSE_FUNDS = frozenset({AK.ACCOUNT_KIND_TOURNAMENT_FEES, AK.ACCOUNT_KIND_HOUSE_RAKE, AK.ACCOUNT_KIND_EXTERNAL})
#: Transfer kind -> allowed (from kinds, to kinds).
ROUTES: dict[int, tuple[frozenset[int], frozenset[int]]] = {
    TK.TRANSFER_KIND_DEPOSIT: (frozenset({AK.ACCOUNT_KIND_EXTERNAL}), PLAYER_KINDS),
    TK.TRANSFER_KIND_WITHDRAWAL: (PLAYER_KINDS, frozenset({AK.ACCOUNT_KIND_EXTERNAL})),
    TK.TRANSFER_KIND_BUY_IN: (PLAYER_KINDS, frozenset({AK.ACCOUNT_KIND_TABLE_ESCROW})),
    TK.TRANSFER_KIND_CASH_OUT: (frozenset({AK.ACCOUNT_KIND_TABLE_ESCROW}), PLAYER_KINDS),
    TK.TRANSFER_KIND_RAKE: (frozenset({AK.ACCOUNT_KIND_TABLE_ESCROW}), frozenset({AK.ACCOUNT_KIND_HOUSE_RAKE})),
    TK.TRANSFER_KIND_TOURNAMENT_ENTRY: (PLAYER_KINDS, frozenset({AK.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL})),
    TK.TRANSFER_KIND_TOURNAMENT_FEE: (PLAYER_KINDS, frozenset({AK.ACCOUNT_KIND_TOURNAMENT_FEES})),
    TK.TRANSFER_KIND_TOURNAMENT_PRIZE: (frozenset({AK.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL}), PLAYER_KINDS),
    TK.TRANSFER_KIND_TOURNAMENT_REFUND: (
        frozenset({AK.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL, AK.ACCOUNT_KIND_TOURNAMENT_FEES}),
        PLAYER_KINDS,
    ),
    TK.TRANSFER_KIND_TOURNAMENT_OVERLAY: (HOUSE_FUNDS, frozenset({AK.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL})),
    TK.TRANSFER_KIND_TOURNAMENT_TO_HOUSE: (frozenset({AK.ACCOUNT_KIND_TOURNAMENT_PRIZE_POOL}), HOUSE_FUNDS),
}

_OWNER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_KEY_MAX = 200
_REFERENCE_MAX = 200
#: The range of the ledger's integers (BIGINT columns, int64 proto fields).
INT64_MAX = 2**63 - 1
#: Default largest amount that enters or leaves the room in one transfer (``WALLET_MAX_TRANSFER``):
#: ten billion in cents.
DEFAULT_MAX_TRANSFER = 10**12
#: Default largest balance money from outside may take an account to (``WALLET_MAX_BALANCE``).
DEFAULT_MAX_BALANCE = 10**14
MAX_AMOUNT = DEFAULT_MAX_TRANSFER


@dataclass(frozen=True)
class Limits:
    """Bounds on money entering the room (minor units); every transfer from or to the external account
    is one (deposits, withdrawals, overlays the house pays from outside).

    * ``max_transfer``: the largest such transfer (INVALID_ARGUMENT above it, nothing needs storage);
    * ``max_balance``: money from outside may not take an account above it (OUT_OF_RANGE: it can pass
      once the balance is lower). Winnings, cash-outs and prizes are never refused for it — refusing
      those would strand chips at a table — and need no bound: every balance but the external one is
      part of what came in, so none can pass the external account's own bound, the int64 range
      (OUT_OF_RANGE too, never "storage unavailable").
    """

    max_transfer: int = DEFAULT_MAX_TRANSFER
    max_balance: int = DEFAULT_MAX_BALANCE

    def __post_init__(self) -> None:
        if not 0 < self.max_transfer <= self.max_balance <= INT64_MAX:
            raise ValueError(
                f"wallet limits: need 0 < max transfer ({self.max_transfer}) <= max balance "
                f"({self.max_balance}) <= {INT64_MAX}"
            )


class ErrorKind(Enum):
    INVALID = "INVALID_ARGUMENT"
    NOT_FOUND = "NOT_FOUND"
    PRECONDITION = "FAILED_PRECONDITION"
    CONFLICT = "ALREADY_EXISTS"
    OUT_OF_RANGE = "OUT_OF_RANGE"


class LedgerError(Exception):
    """A rejected request; nothing was changed."""

    def __init__(self, kind: ErrorKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message


def invalid(message: str) -> LedgerError:
    return LedgerError(ErrorKind.INVALID, message)


def account_id(kind: int, owner: str, currency: int) -> str:
    return f"{KIND_SLUG[kind]}:{owner}:{CURRENCY_SLUG[currency]}"


def external_account(currency: int) -> str:
    return account_id(AK.ACCOUNT_KIND_EXTERNAL, HOUSE, currency)


def house_rake_account(currency: int) -> str:
    return account_id(AK.ACCOUNT_KIND_HOUSE_RAKE, HOUSE, currency)


def table_escrow_account(table_id: str, currency: int) -> str:
    return account_id(AK.ACCOUNT_KIND_TABLE_ESCROW, table_id, currency)


def parse_account_id(value: str, field: str) -> tuple[int, str, int]:
    """``(kind, owner, currency)`` of a well-formed account id, else INVALID_ARGUMENT naming ``field``."""
    parts = value.split(":")
    if len(parts) != 3 or parts[0] not in SLUG_KIND or parts[2] not in SLUG_CURRENCY or not _OWNER.match(parts[1]):
        raise invalid(f"{field}: {value!r} is not an account id like 'player_cash:alice:cash'")
    return SLUG_KIND[parts[0]], parts[1], SLUG_CURRENCY[parts[2]]


def check_owner(owner: str, field: str = "owner") -> None:
    if not _OWNER.match(owner):
        raise invalid(f"{field}: {owner!r} must be 1-64 characters of letters, digits, '_', '.', '-'")


def resolve_currency(kind: int, currency: int) -> int:
    """The account currency: implied by player kinds, CASH by default, else as given."""
    if kind == AK.ACCOUNT_KIND_PLAYER_CASH:
        implied = common_pb2.CURRENCY_CASH
    elif kind == AK.ACCOUNT_KIND_PLAYER_PLAY:
        implied = common_pb2.CURRENCY_PLAY
    else:
        implied = None
    if currency == common_pb2.CURRENCY_UNSPECIFIED:
        return implied or common_pb2.CURRENCY_CASH
    if currency not in CURRENCY_SLUG:
        raise invalid(f"currency: unknown value {currency}")
    if implied is not None and currency != implied:
        raise invalid(
            f"currency: {KIND_SLUG[kind]} accounts hold {CURRENCY_SLUG[implied]}, not {CURRENCY_SLUG[currency]}"
        )
    return currency


_BRING_IN = "the most one transfer may bring in or take out"


def check_amount(amount: int, field: str = "amount", maximum: int = MAX_AMOUNT, what: str = _BRING_IN) -> None:
    if amount <= 0:
        raise invalid(f"{field}: must be a positive number of minor units, got {amount}")
    if amount > maximum:
        raise invalid(f"{field}: {amount} exceeds {what}, {maximum}")


def check_text(text: str, field: str) -> None:
    """No control characters (PostgreSQL cannot even store NUL in text; none belongs in a key)."""
    if _CONTROL.search(text):
        raise invalid(f"{field}: must not contain control characters")


def check_key(key: str, field: str = "idempotency_key") -> None:
    if not key:
        raise invalid(f"{field}: required (a client-chosen unique string per intended transfer)")
    if len(key) > _KEY_MAX:
        raise invalid(f"{field}: longer than {_KEY_MAX} characters")
    check_text(key, field)


def check_reference(reference: str) -> None:
    if len(reference) > _REFERENCE_MAX:
        raise invalid(f"reference: longer than {_REFERENCE_MAX} characters")
    check_text(reference, "reference")


def check_house_owner(kind: int, owner: str) -> None:
    """House kinds are owned by the house only (INVALID_ARGUMENT otherwise)."""
    if kind in HOUSE_KINDS and owner != HOUSE:
        raise invalid(f"owner: a {KIND_SLUG[kind]} account belongs to the house ({HOUSE!r}), not {owner[:64]!r}")


@dataclass(frozen=True)
class TransferSpec:
    """A validated transfer request; two specs with the same key must be equal to be the same transfer."""

    from_account: str
    to_account: str
    amount: int
    kind: int
    reference: str
    key: str

    def validate(self, max_amount: int = MAX_AMOUNT) -> None:
        """Shape checks that need no storage (INVALID_ARGUMENT; a route the kinds forbid FAILED_PRECONDITION).
        ``max_amount`` bounds transfers from or to the external account (:attr:`Limits.max_transfer`)."""
        if self.kind not in ROUTES:
            raise invalid(f"kind: unknown or unspecified transfer kind {self.kind}")
        check_key(self.key)
        check_amount(self.amount, maximum=INT64_MAX, what="the int64 range")
        check_reference(self.reference)
        from_kind, _, from_cur = parse_account_id(self.from_account, "from_account")
        to_kind, _, to_cur = parse_account_id(self.to_account, "to_account")
        if AK.ACCOUNT_KIND_EXTERNAL in (from_kind, to_kind):
            check_amount(self.amount, maximum=max_amount)
        if self.from_account == self.to_account:
            raise invalid("to_account: must differ from from_account")
        name = TK.Name(self.kind)
        allowed_from, allowed_to = ROUTES[self.kind]
        if from_kind not in allowed_from:
            raise LedgerError(
                ErrorKind.PRECONDITION, f"from_account: a {name} cannot come from a {KIND_SLUG[from_kind]} account"
            )
        if to_kind not in allowed_to:
            raise LedgerError(
                ErrorKind.PRECONDITION, f"to_account: a {name} cannot go to a {KIND_SLUG[to_kind]} account"
            )
        if from_cur != to_cur:
            raise LedgerError(
                ErrorKind.PRECONDITION,
                f"to_account: currency {CURRENCY_SLUG[to_cur]} differs from from_account's {CURRENCY_SLUG[from_cur]}",
            )


def rake_key(hand_id: str) -> str:
    """The idempotency key of a hand's rake: the same from gRPC and from Kafka."""
    return f"rake:{hand_id}"
