"""The one module of identifiers: player, table, hand, tournament and account ids."""

from __future__ import annotations

import pytest

from cardroom.core import ids
from cardroom.core.ids import AccountKind, Currency, InvalidId


def test_player_ids() -> None:
    for good in ("alice", "a", "A1", "bob-2", "x_y", "9lives", "p" * 32):
        assert ids.is_player_id(good) and ids.verify_player_id(good) == good
    for bad in ("", "_alice", "-bob", "a.b", "a:b", "a b", "é", "p" * 33, "alice\n", "@x"):
        assert not ids.is_player_id(bad)
        with pytest.raises(InvalidId, match="^player_id: ") as err:
            ids.verify_player_id(bad)
        assert err.value.field == "player_id"


def test_table_and_tournament_ids() -> None:
    for good in ("nl-1", "demo.nlhe", "t", "T_9", "t" * 48):
        assert ids.is_table_id(good) and ids.is_tournament_id(good)
    for bad in ("", ".t", "_t", "a:b", "t" * 49, "t\n", "a/b"):
        assert not ids.is_table_id(bad) and not ids.is_tournament_id(bad)
    with pytest.raises(InvalidId, match="^seat.table_id: "):
        ids.verify_table_id("a:b", "seat.table_id")


def test_hand_ids_round_trip() -> None:
    assert ids.hand_id("nl-1", 42) == "nl-1-42"
    parsed = ids.parse_hand_id("nl-1-42")
    assert (parsed.table_id, parsed.number) == ("nl-1", 42) and str(parsed) == "nl-1-42"
    for bad in ("", "nl", "nl-", "nl-0", "nl-01", "-5", "nl-x", "a:b-3"):
        assert not ids.is_hand_id(bad)
        with pytest.raises(InvalidId, match="^hand_id: "):
            ids.parse_hand_id(bad)
    with pytest.raises(InvalidId, match="^hand_number: "):
        ids.hand_id("nl-1", 0)


def test_account_ids_format_and_parse() -> None:
    assert ids.player_account_id("alice", Currency.CASH) == "player_cash:alice:cash"
    assert ids.player_account_id("alice", Currency.PLAY) == "player_play:alice:play"
    assert ids.escrow_account_id("nl-1", Currency.PLAY) == "table_escrow:nl-1:play"
    assert ids.external_account_id(Currency.CASH) == "external:house:cash"
    assert ids.house_rake_account_id(Currency.PLAY) == "house_rake:house:play"
    assert ids.account_id(AccountKind.TOURNAMENT_FEES, "sunday.1", Currency.CASH) == "tournament_fees:sunday.1:cash"
    for text in ("player_cash:alice:cash", "table_escrow:demo.nlhe:play", "external:house:cash"):
        parsed = ids.parse_account_id(text)
        assert str(parsed) == text and ids.is_account_id(text)
    assert ids.parse_account_id("player_play:bob:play") == ids.AccountId(AccountKind.PLAYER_PLAY, "bob", Currency.PLAY)
    for bad in (
        "alice",
        "x:y",
        "player_cash:alice:play",
        "player_cash:a.b:cash",
        "player_cash:_a:cash",
        "table_escrow:a:b:cash",
        "player_cash::cash",
        "bank:alice:cash",
        "player_cash:alice:euro",
    ):
        assert not ids.is_account_id(bad), bad
        with pytest.raises(InvalidId, match="^from_account: "):
            ids.parse_account_id(bad, "from_account")
    with pytest.raises(InvalidId, match="^player_id: "):
        ids.player_account_id("a.b", Currency.CASH)
    with pytest.raises(InvalidId, match="^owner: .*table_escrow"):
        ids.verify_owner(AccountKind.TABLE_ESCROW, "a:b")


def test_messages_clip_long_values() -> None:
    huge = "x" * 20_000 + "!"
    with pytest.raises(InvalidId) as err:
        ids.verify_player_id(huge)
    assert len(str(err.value)) < 200 and "20001 characters" in str(err.value)
