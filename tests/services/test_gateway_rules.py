"""Login tokens and per-connection token buckets, with time as an input (no process)."""

from __future__ import annotations

import pytest

from gateway.ratelimit import RateLimiter
from gateway.tokens import TokenError, issue, verify

SECRET = b"test-secret"


def test_token_round_trip_and_rejections() -> None:
    token = issue(SECRET, "alice", 1000)
    assert verify(SECRET, token, 999).player_id == "alice"
    with pytest.raises(TokenError, match="expired"):
        verify(SECRET, token, 1000)
    with pytest.raises(TokenError, match="signature"):
        verify(b"other-secret", token, 0)
    forged = token.replace("alice", "bobby")
    with pytest.raises(TokenError, match="signature"):
        verify(SECRET, forged, 0)
    longer = token.replace(".1000.", ".9000.")
    with pytest.raises(TokenError, match="signature"):
        verify(SECRET, longer, 0)
    for bad in ("", "x", "cr1.alice.1000", "cr2.alice.1000.sig", "cr1.al ice.1000.sig", "cr1.alice.-5.sig"):
        with pytest.raises(TokenError, match="malformed"):
            verify(SECRET, bad, 0)
    with pytest.raises(ValueError):
        issue(SECRET, "no.dots", 1000)


def test_token_bucket_per_connection() -> None:
    now = [0.0]
    limiter = RateLimiter(rate=2, burst=3, clock=lambda: now[0])
    assert [limiter.allow("a") for _ in range(4)] == [True, True, True, False]
    assert limiter.allow("b")  # another connection has its own bucket
    now[0] = 0.5  # one token back
    assert limiter.allow("a") and not limiter.allow("a")
    now[0] = 100.0  # refills to the burst, not beyond
    assert [limiter.allow("a") for _ in range(4)] == [True, True, True, False]


def test_bot_policy_picks_legal_actions_and_amounts() -> None:
    import random

    from cardroom.client.policy import choose, passive
    from cardroom.v1 import dealer_pb2 as d

    rng = random.Random(1)
    open_pair = d.LegalActionsView(
        actions=[d.ACTION_TYPE_FOLD, d.ACTION_TYPE_CHECK, d.ACTION_TYPE_BET], min_to=2, max_to=4
    )
    moves = [choose(open_pair, rng, [], fixed_limit=True) for _ in range(300)]
    assert {m.action for m in moves} == {d.ACTION_TYPE_CHECK, d.ACTION_TYPE_BET}  # no fold when checking is free
    assert {m.amount for m in moves if m.action == d.ACTION_TYPE_BET} == {2, 4}  # never 3 in fixed limit
    big_bet = d.LegalActionsView(
        actions=[d.ACTION_TYPE_FOLD, d.ACTION_TYPE_CALL, d.ACTION_TYPE_RAISE], call_amount=2, min_to=4, max_to=500
    )
    raises = [m.amount for m in (choose(big_bet, rng, []) for _ in range(300)) if m.action == d.ACTION_TYPE_RAISE]
    assert raises and all(4 <= a <= 500 for a in raises)
    draw = d.LegalActionsView(actions=[d.ACTION_TYPE_DRAW], max_discards=3)
    for _ in range(50):
        move = choose(draw, rng, ["2c", "3d", "4h", "5s", "7c"])
        assert len(move.discards) <= 3 and set(move.discards) <= {"2c", "3d", "4h", "5s", "7c"}
    assert passive(big_bet).action == d.ACTION_TYPE_CALL and passive(open_pair).action == d.ACTION_TYPE_CHECK


def test_table_view_follows_events() -> None:
    from cardroom.client.view import TableView
    from cardroom.v1 import dealer_pb2 as d

    view = TableView(me="ann")
    seats = [d.SeatView(seat=1, player_id="ann", stack=100), d.SeatView(seat=2, player_id="ben", stack=100)]
    events = [
        d.TableEvent(snapshot=d.TableState(info=d.TableInfo(table_id="t"), seats=seats)),
        d.TableEvent(hand_number=1, hand_started=d.HandStarted(hand_number=1, seats=seats)),
        d.TableEvent(forced_bet=d.ForcedBetPosted(seat=1, kind="small_blind", amount=1)),
        d.TableEvent(forced_bet=d.ForcedBetPosted(seat=2, kind="big_blind", amount=2)),
        d.TableEvent(street_started=d.StreetStarted(index=0, name="preflop")),
        d.TableEvent(cards_dealt=d.CardsDealt(seat=1, cards=["Ah", "Kd"])),
        d.TableEvent(cards_dealt=d.CardsDealt(seat=2, cards=["??", "??"])),
        d.TableEvent(turn_started=d.TurnStarted(to_act=d.LegalActionsView(seat=1, player_id="ann"))),
    ]
    for event in events:
        view.apply(event)
    assert view.my_turn() and view.pot == 3
    me = view.my_seat()
    assert me is not None and (me.stack, me.bet, me.cards) == (99, 1, ["Ah", "Kd"])
    view.apply(d.TableEvent(action=d.Action(seat=1, player_id="ann", action=d.ACTION_TYPE_RAISE, to=6, added=5)))
    assert not view.my_turn() and view.pot == 8 and (me.stack, me.bet) == (94, 6)
    view.apply(d.TableEvent(action=d.Action(seat=2, player_id="ben", action=d.ACTION_TYPE_FOLD)))
    view.apply(d.TableEvent(bet_returned=d.BetReturned(seat=1, amount=4)))
    view.apply(d.TableEvent(pot_awarded=d.PotAwarded(amount=4, winners=[d.SeatAmount(seat=1, amount=4)])))
    view.apply(d.TableEvent(hand_finished=d.HandFinished(hand_number=1)))
    assert me.stack == 102 and view.seats[2].folded and not view.in_hand
    text = view.render()
    assert "ann (you)" in text and "Ah Kd" in text and "?? ??" in text
