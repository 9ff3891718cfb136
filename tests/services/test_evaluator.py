"""The evaluator service as a real process: every RPC's happy path and its INVALID_ARGUMENTs."""

from __future__ import annotations

from itertools import combinations

import grpc
import pytest

from cardroom.core.cards import DECK, parse_cards
from cardroom.core.evaluation import Ranking, evaluate, evaluate_high, evaluate_omaha_high, evaluate_omaha_low8
from cardroom.v1 import common_pb2, evaluator_pb2 as ev, evaluator_pb2_grpc
from tests.services.procs import ServiceProcess, metric_value


@pytest.fixture(scope="module")
def stub(evaluator: ServiceProcess):
    with grpc.insecure_channel(evaluator.address) as channel:
        yield evaluator_pb2_grpc.EvaluatorStub(channel)


def _error(call, request) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as err:
        call(request, timeout=10)
    return err.value


CASES = [
    (ev.RANKING_HIGH, "Ah Kh", "Qh Jh Th 2c 3d", Ranking.HIGH),
    (ev.RANKING_HIGH, "7c 7d 7h 2s 2d", "", Ranking.HIGH),
    (ev.RANKING_OMAHA_HIGH, "Ah Ad Kc Qc", "2h 7h 9h Ts Js", Ranking.OMAHA_HIGH),
    (ev.RANKING_LOW8, "Ac 2d 3h 4s 7c Kd Kh", "", Ranking.LOW8),
    (ev.RANKING_OMAHA_LOW8, "Ac 2d Kh Ks", "3c 6d 8h Qs Jd", Ranking.OMAHA_LOW8),
    (ev.RANKING_DEUCE7, "7c 5d 4h 3s 2c", "", Ranking.DEUCE7),
    (ev.RANKING_SOKO, "2h 5h 9h Kh Ac", "", Ranking.SOKO),
]


@pytest.mark.parametrize(("ranking", "hole", "board", "core"), CASES)
def test_evaluate_matches_the_rules_core(stub, ranking, hole, board, core) -> None:
    reply = stub.Evaluate(ev.EvaluateRequest(ranking=ranking, hole=hole.split(), board=board.split()), timeout=10)
    expected = evaluate(core, parse_cards(hole), parse_cards(board) if board else ())
    assert reply.qualified and expected is not None
    assert reply.hand.ranking == ranking
    assert reply.hand.value == expected.value
    assert reply.hand.description == expected.describe()
    assert reply.hand.cards == [str(c) for c in expected.cards]
    assert reply.hand.category == expected.category.label


def test_evaluate_low_that_does_not_qualify(stub) -> None:
    reply = stub.Evaluate(ev.EvaluateRequest(ranking=ev.RANKING_LOW8, hole="Ac 9d Th Js Qc".split()), timeout=10)
    assert not reply.qualified and not reply.HasField("hand")


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (ev.EvaluateRequest(hole="Ah Kh Qh Jh Th".split()), "ranking"),
        (ev.EvaluateRequest(ranking=99, hole="Ah Kh Qh Jh Th".split()), "ranking"),
        (ev.EvaluateRequest(ranking=ev.RANKING_HIGH, hole="Ah Kh Qh Jh Zz".split()), "hole[4]"),
        (ev.EvaluateRequest(ranking=ev.RANKING_HIGH, hole="Ah Kh".split(), board="Qh Jh Ah".split()), "board"),
        (ev.EvaluateRequest(ranking=ev.RANKING_HIGH, hole="Ah Kh Qh".split()), "hole"),
        (ev.EvaluateRequest(ranking=ev.RANKING_OMAHA_HIGH, hole="Ah Kh".split(), board="2c 3c 4c".split()), "hole"),
        (ev.EvaluateRequest(ranking=ev.RANKING_OMAHA_HIGH, hole="Ah Kh Qd Jd".split(), board="2c 3c".split()), "board"),
        (ev.EvaluateRequest(ranking=ev.RANKING_DEUCE7, hole="7c 5d 4h 3s 2c 9d".split()), "hole"),
    ],
)
def test_evaluate_bad_input_names_the_field(stub, request_, field) -> None:
    err = _error(stub.Evaluate, request_)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details().startswith(f"{field}:"), err.details()


def _players(*holes: tuple[int, str]) -> list[ev.ShowdownPlayer]:
    return [ev.ShowdownPlayer(seat=seat, hole=hole.split()) for seat, hole in holes]


def test_showdown_side_pots_and_odd_chips(stub) -> None:
    # Seat 2 has the best hand but is only in the main pot; seats 5 and 7 tie for the side pot.
    request = ev.ShowdownRequest(
        game=common_pb2.GAME_HOLDEM,
        button_seat=6,
        board="Kh Kd 7c 4s 2d".split(),
        players=_players((2, "Ks Qs"), (5, "Ac 9c"), (7, "Ad 9d")),
        pots=[ev.Pot(amount=301, eligible_seats=[2, 5, 7]), ev.Pot(amount=201, eligible_seats=[5, 7])],
    )
    reply = stub.Showdown(request, timeout=10)
    main, side = reply.pots
    assert list(main.high_winners) == [2] and not main.low_winners
    assert [(a.seat, a.amount, a.half) for a in main.awards] == [(2, 301, ev.POT_HALF_WHOLE)]
    assert main.odd_chip_seat == -1
    # Button 6: seat 7 is first to the left, so it takes the side pot's odd chip.
    assert list(side.high_winners) == [7, 5]
    assert [(a.seat, a.amount) for a in side.awards] == [(7, 101), (5, 100)]
    assert side.odd_chip_seat == 7
    assert {t.seat: t.amount for t in reply.totals} == {2: 301, 5: 100, 7: 101}
    assert sum(t.amount for t in reply.totals) == 502
    hands = {h.seat: h for h in reply.hands}
    assert hands[2].high.description == "Three of a Kind, Kings"
    assert not hands[2].HasField("low")


def test_showdown_hi_lo_split_and_quartering(stub) -> None:
    board = "2c 5d 8h Kc Qs".split()
    request = ev.ShowdownRequest(
        game=common_pb2.GAME_OMAHA_HI_LO,
        button_seat=3,
        board=board,
        players=_players((1, "Ac 3d Kh Kd"), (4, "Ad 3h Jc Tc"), (6, "Qh Qd 9s 9c")),
        pots=[ev.Pot(amount=101, eligible_seats=[1, 4, 6])],
    )
    (pot,) = stub.Showdown(request, timeout=10).pots
    b = parse_cards(" ".join(board))
    highs = {
        s: evaluate_omaha_high(parse_cards(h), b).value
        for s, h in ((1, "Ac 3d Kh Kd"), (4, "Ad 3h Jc Tc"), (6, "Qh Qd 9s 9c"))
    }
    assert list(pot.high_winners) == [max(highs, key=highs.get)] == [1]
    assert evaluate_omaha_low8(parse_cards("Qh Qd 9s 9c"), b) is None
    assert sorted(pot.low_winners) == [1, 4]
    awards = [(a.seat, a.amount, a.half) for a in pot.awards]
    # 101 -> high half 51 (the odd chip goes high), low half 50 split 25/25.
    assert awards == [(1, 51, ev.POT_HALF_HIGH), (4, 25, ev.POT_HALF_LOW), (1, 25, ev.POT_HALF_LOW)]
    assert pot.odd_chip_seat == 1


def test_showdown_no_qualifying_low_gives_the_whole_pot_high(stub) -> None:
    request = ev.ShowdownRequest(
        game=common_pb2.GAME_STUD_HI_LO,
        button_seat=0,
        players=_players((1, "Ac Ad Kc Kd 9s Ts Js"), (2, "2h 2s 3d 3c 9h Th Jh")),
        pots=[ev.Pot(amount=50, eligible_seats=[1, 2])],
    )
    (pot,) = stub.Showdown(request, timeout=10).pots
    assert not pot.low_winners
    assert [(a.seat, a.amount, a.half) for a in pot.awards] == [(1, 50, ev.POT_HALF_WHOLE)]


def test_showdown_lowball_and_soko(stub) -> None:
    deuce = stub.Showdown(
        ev.ShowdownRequest(
            game=common_pb2.GAME_DEUCE_SEVEN,
            button_seat=1,
            players=_players((1, "7c 5d 4h 3s 2c"), (2, "As 2d 3h 4c 5s")),  # the wheel is ace-high in 2-7
            pots=[ev.Pot(amount=40, eligible_seats=[1, 2])],
        ),
        timeout=10,
    )
    assert list(deuce.pots[0].high_winners) == [1]
    assert deuce.hands[0].high.description == "7-5-4-3-2 low"
    soko = stub.Showdown(
        ev.ShowdownRequest(
            game=common_pb2.GAME_SOKO,
            button_seat=1,
            players=_players((1, "2h 5h 9h Kh Ac"), (2, "Ad Qc Kd Qd Js")),
            pots=[ev.Pot(amount=40, eligible_seats=[1, 2])],
        ),
        timeout=10,
    )
    # A four-flush beats one pair in soko.
    assert list(soko.pots[0].high_winners) == [1]
    assert soko.hands[0].high.category == "Four Flush"


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (
            ev.ShowdownRequest(
                game=0,
                players=_players((1, "Ah Kh")),
                board="2c 3c 4c 5d 9s".split(),
                pots=[ev.Pot(amount=1, eligible_seats=[1])],
            ),
            "game",
        ),
        (
            ev.ShowdownRequest(
                game=common_pb2.GAME_HOLDEM,
                players=_players((1, "Ah Kh"), (2, "Ah Qd")),
                board="2c 3c 4c 5d 9s".split(),
                pots=[ev.Pot(amount=1, eligible_seats=[1, 2])],
            ),
            "players[1].hole",
        ),
        (
            ev.ShowdownRequest(
                game=common_pb2.GAME_HOLDEM,
                players=_players((1, "Ah Kh")),
                board="2c 3c 4c".split(),
                pots=[ev.Pot(amount=1, eligible_seats=[1])],
            ),
            "board",
        ),
        (
            ev.ShowdownRequest(
                game=common_pb2.GAME_HOLDEM,
                players=_players((1, "Ah Kh"), (2, "Qd Qs")),
                board="2c 3c 4c 5d 9s".split(),
                pots=[ev.Pot(amount=1, eligible_seats=[1, 3])],
            ),
            "pots[0].eligible_seats",
        ),
        (
            ev.ShowdownRequest(
                game=common_pb2.GAME_HOLDEM,
                players=_players((1, "Ah Kh"), (1, "Qd Qs")),
                board="2c 3c 4c 5d 9s".split(),
                pots=[ev.Pot(amount=1, eligible_seats=[1])],
            ),
            "players",
        ),
        (
            ev.ShowdownRequest(
                game=common_pb2.GAME_HOLDEM, players=_players((1, "Ah Kh")), board="2c 3c 4c 5d 9s".split()
            ),
            "pots",
        ),
        (
            ev.ShowdownRequest(
                game=common_pb2.GAME_OMAHA,
                players=_players((1, "Ah Kh Qh")),
                board="2c 3c 4c 5d 9s".split(),
                pots=[ev.Pot(amount=1, eligible_seats=[1])],
            ),
            "players[0].hole",
        ),
    ],
)
def test_showdown_bad_input_names_the_field(stub, request_, field) -> None:
    err = _error(stub.Showdown, request_)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details().startswith(f"{field}:"), err.details()


def _hands(*holes: str) -> list[common_pb2.CardList]:
    return [common_pb2.CardList(cards=h.split()) for h in holes]


def test_equity_exhaustive_matches_brute_force(stub, evaluator: ServiceProcess) -> None:
    holes, board, dead = ["Ah Kh", "Qs Qd", "7c 8c"], "Qh Jh 2c", "3d"
    before = evaluator.metrics()
    reply = stub.Equity(
        ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_hands(*holes), board=board.split(), dead=[dead]),
        timeout=30,
    )
    assert reply.exhaustive and reply.seed == 0
    hands = [parse_cards(h) for h in holes]
    known = {c.index for h in hands for c in h} | {c.index for c in parse_cards(board + " " + dead)}
    rest = [c for c in DECK if c.index not in known]
    wins, ties, shares, n = [0] * 3, [0] * 3, [0.0] * 3, 0
    for extra in combinations(rest, 2):
        full = parse_cards(board) + list(extra)
        values = [evaluate_high(h + full).value for h in hands]
        best = [i for i, v in enumerate(values) if v == max(values)]
        for i in best:
            shares[i] += 1 / len(best)
            if len(best) == 1:
                wins[i] += 1
            else:
                ties[i] += 1
        n += 1
    assert reply.boards == n == 861  # C(42, 2)
    for i, p in enumerate(reply.players):
        assert p.win == pytest.approx(wins[i] / n)
        assert p.tie == pytest.approx(ties[i] / n)
        assert p.equity == pytest.approx(shares[i] / n)
        assert p.win + p.tie + p.lose == pytest.approx(1.0)
    after = evaluator.metrics()
    assert (
        metric_value(after, "evaluator_equity_requests_total", game="holdem", method="exhaustive")
        - metric_value(before, "evaluator_equity_requests_total", game="holdem", method="exhaustive")
    ) == 1
    assert metric_value(after, "evaluator_equity_boards_count") >= 1


def test_equity_monte_carlo_states_its_sample_and_is_seeded(stub) -> None:
    request = ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_hands("Ah As", "Kd Kc"), samples=30000, seed=42)
    first = stub.Equity(request, timeout=30)
    again = stub.Equity(request, timeout=30)
    assert not first.exhaustive and first.boards == 30000 and first.seed == 42
    assert first == again
    # AA vs KK (no shared suits) is about 81-82 % preflop.
    assert 0.79 < first.players[0].equity < 0.84
    assert first.players[0].equity + first.players[1].equity == pytest.approx(1.0)
    unseeded = stub.Equity(ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_hands("Ah As", "Kd Kc")), timeout=30)
    assert unseeded.seed != 0 and unseeded.boards == 20000


def test_equity_hi_lo_counts_half_pots(stub) -> None:
    holes, board = ["Ac 2c Kd Kh", "Qs Qd Js Jd"], "3h 4s Kc 9d"
    reply = stub.Equity(
        ev.EquityRequest(game=common_pb2.GAME_OMAHA_HI_LO, players=_hands(*holes), board=board.split()), timeout=30
    )
    assert reply.exhaustive and reply.boards == 40
    hands = [parse_cards(h) for h in holes]
    known = {c.index for h in hands for c in h} | {c.index for c in parse_cards(board)}
    shares = [0.0, 0.0]
    for river in (c for c in DECK if c.index not in known):
        full = parse_cards(board) + [river]
        high = [evaluate_omaha_high(h, full).value for h in hands]
        lows = [evaluate_omaha_low8(h, full) for h in hands]
        low = [v.value if v is not None else 0 for v in lows]
        hw = [i for i in (0, 1) if high[i] == max(high)]
        lw = [i for i in (0, 1) if low[i] == max(low) and low[i] > 0]
        for i in hw:
            shares[i] += (0.5 if lw else 1.0) / len(hw)
        for i in lw:
            shares[i] += 0.5 / len(lw)
    # strict=False: the reply's player count comes from the service, not from this test's construction
    for p, share in zip(reply.players, shares, strict=False):
        assert p.equity == pytest.approx(share / 40)
    # Only the four tens (a straight for the queens-jacks) beat top set; every other river scoops.
    assert reply.players[0].win == pytest.approx(36 / 40) and reply.players[1].win == pytest.approx(4 / 40)
    assert sum(p.equity for p in reply.players) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("request_", "field"),
    [
        (ev.EquityRequest(game=common_pb2.GAME_STUD, players=_hands("Ah Kh Qh Jh Th", "2c 3c 4c 5c 7d")), "game"),
        (ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_hands("Ah Kh")), "players"),
        (ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_hands("Ah Kh", "Ah Qd")), "players[1].cards"),
        (ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_hands("Ah Kh", "Qd Qs"), dead=["Qd"]), "dead"),
        (ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_hands("Ah Kh", "Qd Qs"), board=["2c", "3c"]), "board"),
        (ev.EquityRequest(game=common_pb2.GAME_OMAHA, players=_hands("Ah Kh", "Qd Qs")), "players[0].cards"),
        (ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_hands("Ah Kh", "Qd Qs"), samples=-1), "samples"),
        (ev.EquityRequest(game=common_pb2.GAME_HOLDEM, players=_hands("Ah Kh", "Qd Xs")), "players[1].cards[1]"),
    ],
)
def test_equity_bad_input_names_the_field(stub, request_, field) -> None:
    err = _error(stub.Equity, request_)
    assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert err.details().startswith(f"{field}:"), err.details()
