"""Identifiers of the card room — players, tables, hands, tournaments and wallet accounts:
how each is checked, written and read back. Every service validates ids through this module,
so an id one service accepts is accepted by all of them.

* **Player id**: 1-32 letters, digits, ``_`` or ``-``, starting with a letter or a digit
  (``.`` separates the parts of a login token and ``:`` the parts of an account id).
* **Table id** and **tournament id**: 1-48 letters, digits, ``_``, ``.`` or ``-``, starting
  with a letter or a digit.
* **Tournament table id**: ``tt.<tournament id>.<table number>`` (:func:`tournament_table_id`), the
  tournament id shortened with a digest of it when the whole would pass 48 characters; cash
  tables may not take the ``tt.`` prefix.
* **Hand id**: ``<table id>-<hand number>``, the number counting from 1.
* **Account id**: ``<kind>:<owner>:<currency>``, e.g. ``player_cash:alice:cash`` or
  ``table_escrow:nl-1:play``. A player account's owner is a player id, a table escrow's a
  table id, a tournament account's a tournament id; the house accounts belong to ``house``.

The trios follow the core's style: ``is_x(text)`` answers, ``verify_x(text, field)`` raises
:class:`InvalidId` naming the field, ``x_id(...)`` formats and ``parse_x_id(text)`` reads.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from enum import Enum, unique

PLAYER_ID_MAX = 32
TABLE_ID_MAX = 48
TOURNAMENT_ID_MAX = 48
OWNER_MAX = 64
#: How many characters of a bad value an error message repeats.
SHOWN_MAX = 40

_PLAYER = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_-]{{0,{PLAYER_ID_MAX - 1}}}")
_TABLE = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{TABLE_ID_MAX - 1}}}")
_TOURNAMENT = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{TOURNAMENT_ID_MAX - 1}}}")
_OWNER = re.compile(rf"[A-Za-z0-9][A-Za-z0-9_.-]{{0,{OWNER_MAX - 1}}}")
_HAND_NUMBER = re.compile(r"[1-9][0-9]{0,17}")

HOUSE = "house"


class InvalidId(ValueError):
    """A malformed identifier: ``field`` names the request field, ``message`` says why."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


def shown(value: str) -> str:
    """``value`` quoted for an error message, cut to :data:`SHOWN_MAX` characters."""
    if len(value) <= SHOWN_MAX:
        return repr(value)
    return f"{value[:SHOWN_MAX]!r}... ({len(value)} characters)"


# ------------------------------------------------------------------ players, tables, tournaments


def is_player_id(text: str) -> bool:
    return _PLAYER.fullmatch(text) is not None


def verify_player_id(text: str, field: str = "player_id") -> str:
    if not is_player_id(text):
        raise InvalidId(
            field,
            f"{shown(text)} is not a player id: 1-{PLAYER_ID_MAX} letters, digits, '_' or '-', "
            "starting with a letter or digit",
        )
    return text


def is_table_id(text: str) -> bool:
    return _TABLE.fullmatch(text) is not None


def verify_table_id(text: str, field: str = "table_id") -> str:
    if not is_table_id(text):
        raise InvalidId(
            field,
            f"{shown(text)} is not a table id: 1-{TABLE_ID_MAX} letters, digits, '_', '.' or '-', "
            "starting with a letter or digit",
        )
    return text


def created_table_id(request_id: str) -> str:
    """The id of the cash table a CreateTable with ``request_id`` and no table id makes: the same for
    a retry, known before the call (the gateway routes the call to the id's dealer replica)."""
    if not request_id:
        raise InvalidId("request_id", "required to name a new table")
    return "t-" + hashlib.sha256(request_id.encode()).hexdigest()[:12]


def is_tournament_id(text: str) -> bool:
    return _TOURNAMENT.fullmatch(text) is not None


def verify_tournament_id(text: str, field: str = "tournament_id") -> str:
    if not is_tournament_id(text):
        raise InvalidId(
            field,
            f"{shown(text)} is not a tournament id: 1-{TOURNAMENT_ID_MAX} letters, digits, "
            "'_', '.' or '-', starting with a letter or digit",
        )
    return text


TOURNAMENT_TABLE_PREFIX = "tt."


def tournament_table_id(tournament_id: str, table: int) -> str:
    """The dealer's table id of table number ``table`` (1, 2, ...) of ``tournament_id``: the one
    place that names a tournament's tables (dealer, tournament service, gateway, bots)."""
    verify_tournament_id(tournament_id)
    if table < 1:
        raise InvalidId("table", f"a tournament's tables are numbered from 1, got {table}")
    tail = f".{table}"
    text = f"{TOURNAMENT_TABLE_PREFIX}{tournament_id}{tail}"
    if len(text) > TABLE_ID_MAX:  # a long tournament id: its head and a digest of the whole
        digest = hashlib.sha256(tournament_id.encode()).hexdigest()[:10]
        head = tournament_id[: TABLE_ID_MAX - len(TOURNAMENT_TABLE_PREFIX) - len(tail) - len(digest) - 1]
        text = f"{TOURNAMENT_TABLE_PREFIX}{head}-{digest}{tail}"
    return verify_table_id(text)


def is_tournament_table_id(text: str) -> bool:
    """True for a table id of the tournament tables' form (reserved: no cash table takes it)."""
    return text.startswith(TOURNAMENT_TABLE_PREFIX)


# ------------------------------------------------------------------ hands


@dataclass(frozen=True, slots=True)
class HandId:
    """The ``number``-th hand dealt at ``table_id``."""

    table_id: str
    number: int

    def __str__(self) -> str:
        return f"{self.table_id}-{self.number}"


def player_request_id(player_id: str, request_id: str) -> str:
    """A client's request id scoped to its player (``PLAYER:ID``), as services de-duplicate it: one
    player's id never answers, or blocks, another's (the dealer's seat commands, the tournament
    entries the gateway forwards)."""
    return f"{player_id}:{request_id}"


def hand_id(table_id: str, number: int) -> str:
    verify_table_id(table_id)
    if number < 1:
        raise InvalidId("hand_number", f"must be 1 or more, got {number}")
    return str(HandId(table_id, number))


def is_hand_id(text: str) -> bool:
    table_id, dash, number = text.rpartition("-")
    return bool(dash) and is_table_id(table_id) and _HAND_NUMBER.fullmatch(number) is not None


def parse_hand_id(text: str, field: str = "hand_id") -> HandId:
    if not is_hand_id(text):
        raise InvalidId(field, f"{shown(text)} is not a hand id like 'nl-1-42' (<table id>-<hand number>)")
    table_id, _, number = text.rpartition("-")
    return HandId(table_id, int(number))


# ------------------------------------------------------------------ wallet accounts


@unique
class Currency(Enum):
    CASH = "cash"
    PLAY = "play"


@unique
class AccountKind(Enum):
    """The kinds of wallet account; the value is the kind's word inside an account id."""

    PLAYER_CASH = "player_cash"
    PLAYER_PLAY = "player_play"
    TABLE_ESCROW = "table_escrow"
    HOUSE_RAKE = "house_rake"
    TOURNAMENT_PRIZE_POOL = "tournament_prize_pool"
    TOURNAMENT_FEES = "tournament_fees"
    EXTERNAL = "external"


PLAYER_KINDS = frozenset({AccountKind.PLAYER_CASH, AccountKind.PLAYER_PLAY})
TOURNAMENT_KINDS = frozenset({AccountKind.TOURNAMENT_PRIZE_POOL, AccountKind.TOURNAMENT_FEES})
#: The one currency a player account kind holds.
PLAYER_KIND_CURRENCY = {AccountKind.PLAYER_CASH: Currency.CASH, AccountKind.PLAYER_PLAY: Currency.PLAY}


@dataclass(frozen=True, slots=True)
class AccountId:
    kind: AccountKind
    owner: str
    currency: Currency

    def __str__(self) -> str:
        return f"{self.kind.value}:{self.owner}:{self.currency.value}"


def owner_problem(kind: AccountKind, owner: str) -> str | None:
    """Why ``owner`` cannot own an account of ``kind``, or None when it can."""
    if kind in PLAYER_KINDS:
        return None if is_player_id(owner) else f"{shown(owner)} is not a player id"
    if kind is AccountKind.TABLE_ESCROW:
        return None if is_table_id(owner) else f"{shown(owner)} is not a table id"
    if kind in TOURNAMENT_KINDS:
        return None if is_tournament_id(owner) else f"{shown(owner)} is not a tournament id"
    if _OWNER.fullmatch(owner) is None:
        return f"{shown(owner)} must be 1-{OWNER_MAX} letters, digits, '_', '.' or '-'"
    return None


def verify_owner(kind: AccountKind, owner: str, field: str = "owner") -> str:
    problem = owner_problem(kind, owner)
    if problem is not None:
        raise InvalidId(field, f"{problem} (owner of a {kind.value} account)")
    return owner


def account_id(kind: AccountKind, owner: str, currency: Currency) -> str:
    """The account id ``<kind>:<owner>:<currency>`` (the owner checked for the kind)."""
    verify_owner(kind, owner)
    return str(AccountId(kind, owner, currency))


def player_account_id(player_id: str, currency: Currency) -> str:
    """A player's cash (``player_cash:P:cash``) or play-money (``player_play:P:play``) account."""
    kind = AccountKind.PLAYER_PLAY if currency is Currency.PLAY else AccountKind.PLAYER_CASH
    verify_player_id(player_id)
    return str(AccountId(kind, player_id, currency))


def escrow_account_id(table_id: str, currency: Currency) -> str:
    verify_table_id(table_id)
    return str(AccountId(AccountKind.TABLE_ESCROW, table_id, currency))


def external_account_id(currency: Currency) -> str:
    return str(AccountId(AccountKind.EXTERNAL, HOUSE, currency))


def house_rake_account_id(currency: Currency) -> str:
    return str(AccountId(AccountKind.HOUSE_RAKE, HOUSE, currency))


_KINDS = {kind.value: kind for kind in AccountKind}
_CURRENCIES = {currency.value: currency for currency in Currency}


def account_problem(text: str) -> str | None:
    """Why ``text`` is not an account id, or None when it is one."""
    parts = text.split(":")
    if len(parts) != 3 or parts[0] not in _KINDS or parts[2] not in _CURRENCIES:
        return f"{shown(text)} is not an account id like 'player_cash:alice:cash'"
    kind, currency = _KINDS[parts[0]], _CURRENCIES[parts[2]]
    if kind in PLAYER_KIND_CURRENCY and PLAYER_KIND_CURRENCY[kind] is not currency:
        return f"{shown(text)}: a {kind.value} account holds {PLAYER_KIND_CURRENCY[kind].value}"
    problem = owner_problem(kind, parts[1])
    return None if problem is None else f"{shown(text)}: the owner {problem}"


def is_account_id(text: str) -> bool:
    return account_problem(text) is None


def parse_account_id(text: str, field: str = "account_id") -> AccountId:
    problem = account_problem(text)
    if problem is not None:
        raise InvalidId(field, problem)
    kind, owner, currency = text.split(":")
    return AccountId(_KINDS[kind], owner, _CURRENCIES[currency])
