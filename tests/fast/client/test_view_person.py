"""Fast tier: the client's table view as a person reads it (issue 13) — fed the table events the
dealer sends; messages in words."""

from __future__ import annotations

import asyncio
import io
from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from cardroom.client.terminal import Terminal, describe_legal
from cardroom.client.view import TableView
from cardroom.client.words import for_people
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g


def ev(**kind: Any) -> d.TableEvent:
    return d.TableEvent(table_id="t1", **kind)


def seat(n: int, player: str, stack: int = 1000, **kw: Any) -> d.SeatView:
    return d.SeatView(seat=n, player_id=player, stack=stack, connected=True, **kw)


def five_card_draw() -> TableView:
    view = TableView(me="ann")
    view.apply(ev(snapshot=d.TableState(info=d.TableInfo(table_id="t1"), seats=[seat(1, "ann"), seat(2, "bob")])))
    view.apply(ev(hand_started=d.HandStarted(hand_number=1, button=2, seats=[seat(1, "ann"), seat(2, "bob")])))
    view.apply(ev(cards_dealt=d.CardsDealt(seat=1, cards=["As", "Td", "Kh", "Qd", "2c"])))
    view.apply(ev(cards_dealt=d.CardsDealt(seat=2, cards=["??"] * 5)))
    return view


def test_after_a_draw_the_view_is_the_hand_the_dealer_holds() -> None:
    """Issue 13: after `draw Td Qd` the client kept the discarded cards and overwrote others; the
    engine's hand is the kept cards in order, then those received."""
    view = five_card_draw()
    view.apply(
        ev(
            action=d.Action(
                seat=1,
                player_id="ann",
                action=d.ACTION_TYPE_DRAW,
                discarded=2,
                discards=["Td", "Qd"],
                received=["3h", "9s"],
            )
        )
    )
    assert view.seats[1].cards == ["As", "Kh", "2c", "3h", "9s"]
    view.apply(
        ev(action=d.Action(seat=2, player_id="bob", action=d.ACTION_TYPE_DRAW, discarded=3, received=["??"] * 3))
    )
    assert view.seats[2].cards == ["??"] * 5 and view.seats[2].drawn == 3
    assert "drew 3" in view.render() and "drew 2" in view.render()


def test_the_button_the_clock_and_the_marks_are_shown() -> None:
    view = five_card_draw()
    deadline = Timestamp(seconds=1_000_020)
    view.now = lambda: 1_000_000.0
    view.apply(ev(turn_started=d.TurnStarted(to_act=d.LegalActionsView(seat=2, player_id="bob", deadline=deadline))))
    view.apply(ev(seat_changed=d.SeatChanged(change="sat_down", seat=seat(3, "cat", waiting_for_big_blind=True))))
    view.apply(ev(seat_changed=d.SeatChanged(change="sat_out", seat=seat(4, "dan", sitting_out=True))))
    text = view.render()
    lines = {line.split("seat ")[1][:1]: line for line in text.splitlines() if " seat " in line}
    assert lines["2"].startswith(" >D")
    assert "waiting for the big blind" in lines["3"] and "sitting out" in lines["4"]
    assert "to act: bob (action clock 20 s)" in text


def test_own_stud_up_cards_are_marked_and_the_bring_in_amount_offered() -> None:
    view = TableView(me="ann")
    view.apply(ev(snapshot=d.TableState(info=d.TableInfo(table_id="t1"), seats=[seat(1, "ann")])))
    view.apply(ev(hand_started=d.HandStarted(hand_number=1, seats=[seat(1, "ann")])))
    view.apply(ev(cards_dealt=d.CardsDealt(seat=1, cards=["As", "Kd"], face_up=False)))
    view.apply(ev(cards_dealt=d.CardsDealt(seat=1, cards=["7c"], face_up=True)))
    assert "As Kd [7c]" in view.render()
    legal = d.LegalActionsView(
        seat=1, actions=[d.ACTION_TYPE_BRING_IN, d.ACTION_TYPE_COMPLETE], min_to=10, max_to=10, bring_in=5
    )
    assert describe_legal(legal) == "bring-in 5 | complete 10"


def test_own_cards_stay_visible_after_sitting_out_during_the_hand() -> None:
    """Issue 13: after `sitout` during a hand his own cards turned into '?? ??'."""
    view = five_card_draw()
    view.apply(ev(seat_changed=d.SeatChanged(change="sat_out", seat=seat(1, "ann", cards=["??"] * 5))))
    assert view.seats[1].cards == ["As", "Td", "Kh", "Qd", "2c"]


def test_side_pots_and_a_result_line_per_pot() -> None:
    view = five_card_draw()
    view.apply(ev(hand_shown=d.HandShown(seat=1, cards=["As", "Ah", "Kd", "Kc", "2c"], description="two pair")))
    view.apply(
        ev(pot_awarded=d.PotAwarded(pot_index=0, share="all", amount=300, winners=[d.SeatAmount(seat=1, amount=300)]))
    )
    view.apply(
        ev(pot_awarded=d.PotAwarded(pot_index=1, share="all", amount=80, winners=[d.SeatAmount(seat=2, amount=80)]))
    )
    view.apply(ev(hand_finished=d.HandFinished(hand_number=1)))
    assert view.results == ["main pot 300: ann wins 300 with two pair", "side pot 1 80: bob wins 80"]
    assert "side pot 1 80: bob wins 80" in view.render()


def test_the_artificial_all_in_is_named() -> None:
    view = five_card_draw()
    view.apply(
        ev(
            action=d.Action(
                seat=2, player_id="bob", action=d.ACTION_TYPE_ARTIFICIAL_ALL_IN, to=20, all_in=True, timeout=True
            )
        )
    )
    assert view.last == "bob all-in (artificial) (timeout)"


def test_messages_are_in_words_without_status_names_or_account_ids() -> None:
    text = for_people(
        "FAILED_PRECONDITION",
        "INSUFFICIENT_FUNDS",
        "buy-in: insufficient funds in player_play:ann:play (FAILED_PRECONDITION)",
        me="ann",
    )
    assert text == "insufficient funds: buy-in: insufficient funds in your play-money account"
    assert "bob's cash account" in for_people("FAILED_PRECONDITION", "", "no money in player_cash:bob:cash", "ann")
    assert for_people("UNAVAILABLE", "", "") == "the card room cannot be reached just now; try again"
    assert (
        for_people("FAILED_PRECONDITION", "", "table t1: seat 3 is empty")
        == "not possible now: table t1: seat 3 is empty"
    )


class FakeClient:
    def __init__(self, tables: list[g.LobbyTable]) -> None:
        self.tables = tables

    async def lobby(self) -> list[g.LobbyTable]:
        return self.tables


def test_the_lobby_says_no_maximum() -> None:
    out = io.StringIO()
    term = Terminal(
        FakeClient([g.LobbyTable(table_id="t1", variant="FT", min_buy_in=40, max_buy_in=0)]),  # type: ignore[arg-type]
        out=out,
        readline=lambda: "1\n",
    )
    picked = asyncio.run(term.pick_table(None))
    assert picked is not None and "buy-in 40..no maximum" in out.getvalue()


def test_cashier_commands_parse() -> None:
    from cardroom.client.terminal import parse_command

    assert parse_command("cashier") == "cashier"
    assert parse_command("cashier history") == "cashier history"
    assert parse_command("cashier deposit 500 cash") == "cashier deposit 500 cash"
    assert parse_command("cashier withdraw 20") == "cashier withdraw 20"
    assert str(parse_command("cashier deposit lots")).startswith("? cashier")
    assert parse_command("post") == "post"


def test_the_bots_say_what_their_errors_were() -> None:
    from cardroom.client.stats import Stats

    stats = Stats()
    stats.refused("OUT_OF_TURN", "FAILED_PRECONDITION", "not your turn: seat 2 (bob) is to act")
    stats.refused("OUT_OF_TURN", "FAILED_PRECONDITION", "not your turn: seat 3 (cat) is to act")
    stats.refused("", "UNAVAILABLE")
    assert stats.errors_said() == ["out of turn (2x): not your turn: seat 3 (cat) is to act", "unavailable (1x)"]


class LeavingClient:
    async def leave(self, table_id: str) -> g.LeaveResponse:
        return g.LeaveResponse(pending=True, returning=940)

    async def balances(self) -> g.MyBalanceResponse:
        from cardroom.v1 import common_pb2

        return g.MyBalanceResponse(balances=[g.PlayerBalance(currency=common_pb2.CURRENCY_PLAY, balance=9000)])


def test_the_balance_after_a_leave_counts_the_chips_coming_back() -> None:
    """Issue 13 bug 6: the balance printed after a leave left out the chips still at the table."""
    out = io.StringIO()
    term = Terminal(LeavingClient(), out=out)  # type: ignore[arg-type]

    async def body() -> None:
        await term.leave("t1")
        await term.show_balance()

    asyncio.run(body())
    text = out.getvalue()
    assert "940 chips come back" in text and "play 9000 (+ 940 coming back from the table" in text


def test_a_dealer_restart_is_said_in_words() -> None:
    """Issue 14 item 12: the restored table's gap marker reaches the player as a sentence."""
    view = five_card_draw()
    view.apply(ev(restored=d.TableRestored(snapshot_sequence=7, hand_cancelled=True)))
    assert view.last == "the dealer restarted: the hand in progress is cancelled, every chip back as before the deal"


def test_standing_pat_keeps_ones_own_cards() -> None:
    """Found by the web fold's contract test (issue 18): standing pat (no discards) turned the
    player's own hand into "??" cards. rules/003 (draw games): "he will stand pat (draw 0 cards)"
    — he keeps the cards he holds."""
    view = five_card_draw()
    view.apply(ev(action=d.Action(seat=1, player_id="ann", action=d.ACTION_TYPE_DRAW, discarded=0)))
    assert view.seats[1].cards == ["As", "Td", "Kh", "Qd", "2c"] and view.seats[1].drawn == 0
    view.apply(ev(action=d.Action(seat=2, player_id="bob", action=d.ACTION_TYPE_DRAW, discarded=0)))
    assert view.seats[2].cards == ["??"] * 5


def test_the_turn_shown_is_the_viewers_own_from_his_turn_started_or_a_snapshot_taken_during_it() -> None:
    """What the bots, the load test, the terminal and the test players act on: a session opened (or a
    viewer joined) after his turn began sees it only in the snapshot."""
    view = five_card_draw()
    mine, bobs = d.LegalActionsView(player_id="ann", seat=1), d.LegalActionsView(player_id="bob", seat=2)
    events = [
        (ev(turn_started=d.TurnStarted(to_act=bobs)), None),
        (ev(turn_started=d.TurnStarted(to_act=mine)), mine),
        (ev(seat_changed=d.SeatChanged(change="connection", seat=seat(2, "bob"))), None),  # still his turn
        (ev(snapshot=d.TableState(info=d.TableInfo(table_id="t1"), seats=[seat(1, "ann")], to_act=mine)), mine),
        (ev(snapshot=d.TableState(info=d.TableInfo(table_id="t1"), seats=[seat(1, "ann")], to_act=bobs)), None),
        (ev(snapshot=d.TableState(info=d.TableInfo(table_id="t1"), seats=[seat(1, "ann")])), None),
    ]
    for event, shown in events:
        view.apply(event)
        assert view.turn_shown(event) == shown, event
    assert TableView(me="").turn_shown(events[0][0]) is None
