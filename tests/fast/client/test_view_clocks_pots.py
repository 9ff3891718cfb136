"""Fast tier: the table view's two clocks and the pots during the hand (issue 13, 'The table
view': "the action clock and time bank counting down (the server sends the deadline)"; "side pots
separately"). The view is fed the table events the dealer sends; it computes nothing but the time
left to the deadlines it was given."""

from __future__ import annotations

from typing import Any

from google.protobuf.timestamp_pb2 import Timestamp

from cardroom.client.view import TableView
from cardroom.v1 import dealer_pb2 as d

NOW = 1_000_000.0


def ev(**kind: Any) -> d.TableEvent:
    return d.TableEvent(table_id="t1", **kind)


def seat(n: int, player: str, stack: int = 1000) -> d.SeatView:
    return d.SeatView(seat=n, player_id=player, stack=stack, connected=True)


def at(seconds: float) -> Timestamp:
    ts = Timestamp()
    ts.FromNanoseconds(int(seconds * 1e9))
    return ts


def three_handed(now: list[float]) -> TableView:
    view = TableView(me="ann", now=lambda: now[0])
    seats = [seat(1, "ann"), seat(2, "bob", 100), seat(3, "cat")]
    view.apply(ev(snapshot=d.TableState(info=d.TableInfo(table_id="t1"), seats=seats)))
    view.apply(ev(hand_started=d.HandStarted(hand_number=1, button=3, seats=seats)))
    return view


def test_the_action_clock_then_the_time_bank_count_down_separately() -> None:
    now = [NOW]
    view = three_handed(now)
    view.apply(
        ev(
            turn_started=d.TurnStarted(
                to_act=d.LegalActionsView(
                    seat=1, player_id="ann", deadline=at(NOW + 20), action_deadline=at(NOW + 20), time_bank_seconds=30
                )
            )
        )
    )
    assert view.clock_text() == "action clock 20 s, time bank 30 s"
    now[0] += 8
    assert "to act: ann (action clock 12 s, time bank 30 s)" in view.render()
    now[0] += 15  # the action clock is used up; the dealer has not said the time bank runs yet
    assert view.clock_text() == "action clock 0 s, time bank 30 s"
    # the dealer starts the time bank: a new TurnStarted with the turn's new deadline
    started = NOW + 20
    view.apply(
        ev(
            turn_started=d.TurnStarted(
                to_act=d.LegalActionsView(
                    seat=1,
                    player_id="ann",
                    deadline=at(started + 30),
                    action_deadline=at(started),
                    time_bank_seconds=30,
                    time_bank_running=True,
                )
            )
        )
    )
    assert view.clock_text() == "time bank 27 s"
    assert view.last == "ann: action clock used up, time bank 27 s"
    now[0] += 17
    assert "to act: ann (time bank 10 s)" in view.render()
    now[0] += 60
    assert view.clock_text() == "time bank 0 s"


def test_without_a_time_bank_only_the_action_clock_is_shown() -> None:
    now = [NOW]
    view = three_handed(now)
    view.apply(
        ev(
            turn_started=d.TurnStarted(
                to_act=d.LegalActionsView(seat=2, player_id="bob", deadline=at(NOW + 15), action_deadline=at(NOW + 15))
            )
        )
    )
    assert view.clock_text() == "action clock 15 s"


def test_side_pots_are_shown_during_the_hand_as_the_dealer_sends_them() -> None:
    """rules/003 'All-Ins': "A player that is all-in can only win as much chips from every other
    player that he has put into the pot" — bob is all-in for 100; the others bet on in a side pot."""
    now = [NOW]
    view = three_handed(now)
    view.apply(ev(pots_changed=d.PotsChanged(pots=[d.PotView(amount=300, members=[1, 2, 3])])))
    text = view.render()
    assert "side pot" not in text  # one pot: the pot line says it
    view.apply(
        ev(
            pots_changed=d.PotsChanged(
                pots=[d.PotView(amount=300, members=[1, 2, 3]), d.PotView(amount=400, members=[1, 3])]
            )
        )
    )
    assert view.last == "main pot 300, side pot 1 400 (ann, cat)"
    assert "   main pot 300, side pot 1 400 (ann, cat)" in view.render().splitlines()
    view.apply(ev(hand_finished=d.HandFinished(hand_number=1)))
    assert view.pots == [] and "side pot 1 400" not in view.render()


def test_a_snapshot_in_the_middle_of_a_hand_brings_the_pots() -> None:
    view = TableView(me="ann")
    pots = [d.PotView(amount=30, members=[1, 2]), d.PotView(amount=50, members=[2])]
    view.apply(ev(snapshot=d.TableState(in_hand=True, seats=[seat(1, "ann"), seat(2, "bob")], pots=pots, pot=80)))
    assert view.pots_text() == "main pot 30, side pot 1 50 (bob)"
    assert "main pot 30, side pot 1 50 (bob)" in view.render()
