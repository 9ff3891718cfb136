"""Property: every service accepts exactly the same player ids (issue 10: an id the gateway
accepted, e.g. with a leading underscore, was refused by the wallet and the dealer).

The same seeded stream of candidate ids goes through each service's own validation — the
gateway's login tokens, the wallet's OpenAccount check for both player account kinds and its
account-id parser, the connection monitor's check — and all must agree with
:func:`cardroom.core.ids.is_player_id`."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from cardroom.core import ids
from cardroom.v1 import common_pb2, wallet_pb2 as w

ALPHABET = "abcXYZ019_-.:@ /é\n"
EDGES = [
    "",
    "_alice",
    "-bob",
    "alice_",
    "a.b",
    "a:b",
    "a@b",
    "x" * 32,
    "x" * 33,
    "x" * 48,
    "x" * 65,
    "alice\n",
    "Al-ice_9",
    "9",
    "é",
]


def candidates(n: int = 3000, seed: int = 10) -> list[str]:
    rng = random.Random(seed)
    out = list(EDGES)
    for _ in range(n):
        size = rng.choice((1, 2, 3, 8, 31, 32, 33, 47, 48, 49, 64, 65))
        out.append("".join(rng.choice(ALPHABET) for _ in range(size)))
        out.append("".join(rng.choice("abcXYZ019_-") for _ in range(size)))  # mostly valid-looking
    return out


def accepts(check: Callable[[str], object]) -> Callable[[str], bool]:
    def run(player: str) -> bool:
        try:
            check(player)
        except Exception:  # each service's own rejection type
            return False
        return True

    return run


def _gateway() -> Callable[[str], object]:
    from gateway.tokens import issue, verify

    return lambda p: verify(b"s", issue(b"s", p, 10**10), 0)


def _wallet_cash() -> Callable[[str], object]:
    from wallet.service import check_open

    return lambda p: check_open(w.ACCOUNT_KIND_PLAYER_CASH, p, common_pb2.CURRENCY_UNSPECIFIED)


def _wallet_play() -> Callable[[str], object]:
    from wallet.service import check_open

    return lambda p: check_open(w.ACCOUNT_KIND_PLAYER_PLAY, p, common_pb2.CURRENCY_PLAY)


def _wallet_account() -> Callable[[str], object]:
    from wallet.service import parse_account

    return lambda p: parse_account(f"player_cash:{p}:cash", "account_id")


def _monitor() -> Callable[[str], object]:
    from connection_monitor.service import check_player

    return check_player


def _dealer() -> Callable[[str], object]:
    from dealer.commands import check_player

    return check_player


SERVICES = [
    pytest.param(_gateway, id="gateway"),
    pytest.param(_wallet_cash, id="wallet-open-cash"),
    pytest.param(_wallet_play, id="wallet-open-play"),
    pytest.param(_wallet_account, id="wallet-account-id"),
    pytest.param(_monitor, id="connection-monitor"),
    pytest.param(_dealer, id="dealer"),
]


@pytest.mark.parametrize("service", SERVICES)
def test_every_service_accepts_the_same_player_ids(service: Callable[[], Callable[[str], object]]) -> None:
    check = accepts(service())
    disagree = [p for p in candidates() if check(p) != ids.is_player_id(p)]
    assert not disagree, f"{len(disagree)} ids judged differently, e.g. {disagree[:5]!r}"


def test_the_candidates_cover_both_answers() -> None:
    judged = [ids.is_player_id(p) for p in candidates()]
    assert judged.count(True) > 500 and judged.count(False) > 500
