"""The Evaluator gRPC servicer. Bad input -> INVALID_ARGUMENT naming the field (a BadRequest violation)."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import grpc

from cardroom.core.evaluation import HandValue, evaluate
from cardroom.runtime.errors import rpc
from cardroom.v1 import evaluator_pb2, evaluator_pb2_grpc
from evaluator import metrics
from evaluator.cardtext import check_counts, check_distinct, parse_field
from evaluator.equity import EquityLimits, equity
from evaluator.errors import BadRequest, bad_input
from evaluator.games import GAMES, RANKING_COUNTS, RANKING_PROTO, RANKINGS, GameRules
from evaluator.showdown import PlayerCards, PotSpec, evaluate_players, settle

_HALF = {"whole": evaluator_pb2.POT_HALF_WHOLE, "high": evaluator_pb2.POT_HALF_HIGH, "low": evaluator_pb2.POT_HALF_LOW}


def hand_proto(hand: HandValue) -> evaluator_pb2.HandValue:
    return evaluator_pb2.HandValue(
        ranking=RANKING_PROTO[hand.ranking],
        value=hand.value,
        category=hand.category.label,
        cards=[str(c) for c in hand.cards],
        description=hand.describe(),
    )


def game_rules(game: int) -> GameRules:
    if game not in GAMES:
        raise BadRequest("game", f"unknown or unspecified game {game}")
    return GAMES[game]


class EvaluatorService(evaluator_pb2_grpc.EvaluatorServicer):
    def __init__(self, workers: int = 2, limits: EquityLimits | None = None) -> None:
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="equity")
        self.limits = limits or EquityLimits()

    @rpc
    async def Evaluate(
        self, request: evaluator_pb2.EvaluateRequest, context: grpc.aio.ServicerContext
    ) -> evaluator_pb2.EvaluateResponse:
        try:
            if request.ranking not in RANKINGS:
                raise BadRequest("ranking", f"unknown or unspecified ranking {request.ranking}")
            ranking = RANKINGS[request.ranking]
            hole = parse_field(request.hole, "hole")
            board = parse_field(request.board, "board")
            hole_counts, board_counts, total_counts = RANKING_COUNTS[ranking]
            check_counts(hole, hole_counts, "hole")
            check_counts(board, board_counts, "board")
            if total_counts and len(hole) + len(board) not in total_counts:
                raise BadRequest(
                    "hole",
                    f"{len(hole)} hole + {len(board)} board cards, expected "
                    f"{' or '.join(map(str, total_counts))} in all",
                )
            check_distinct([("hole", hole), ("board", board)])
            hand = evaluate(ranking, hole, board)
        except ValueError as err:
            raise bad_input(err) from None
        metrics.EVALUATIONS.labels(ranking.value).inc()
        if hand is None:
            return evaluator_pb2.EvaluateResponse(qualified=False)
        return evaluator_pb2.EvaluateResponse(hand=hand_proto(hand), qualified=True)

    @rpc
    async def Showdown(
        self, request: evaluator_pb2.ShowdownRequest, context: grpc.aio.ServicerContext
    ) -> evaluator_pb2.ShowdownResponse:
        try:
            rules = game_rules(request.game)
            board = parse_field(request.board, "board")
            players = [
                PlayerCards(p.seat, parse_field(p.hole, f"players[{i}].hole")) for i, p in enumerate(request.players)
            ]
            if not request.pots:
                raise BadRequest("pots", "at least one pot is required")
            results = evaluate_players(rules, players, board)
            outcomes = settle(
                results, [PotSpec(p.amount, list(p.eligible_seats)) for p in request.pots], request.button_seat
            )
        except ValueError as err:
            raise bad_input(err) from None
        metrics.EVALUATIONS.labels(rules.high.value).inc(len(results))
        if rules.low is not None:
            metrics.EVALUATIONS.labels(rules.low.value).inc(len(results))
        response = evaluator_pb2.ShowdownResponse()
        for r in results:
            hand = response.hands.add(seat=r.seat, high=hand_proto(r.high))
            if r.low is not None:
                hand.low.CopyFrom(hand_proto(r.low))
        totals: dict[int, int] = {}
        for o in outcomes:
            pot = response.pots.add(
                pot_index=o.index,
                amount=o.amount,
                high_winners=o.high_winners,
                low_winners=o.low_winners,
                odd_chip_seat=o.odd_chip_seat,
            )
            for seat, amount, half in o.awards:
                pot.awards.add(seat=seat, amount=amount, half=_HALF[half])
                totals[seat] = totals.get(seat, 0) + amount
        for seat in sorted(totals):
            response.totals.add(seat=seat, amount=totals[seat])
        return response

    @rpc
    async def Equity(
        self, request: evaluator_pb2.EquityRequest, context: grpc.aio.ServicerContext
    ) -> evaluator_pb2.EquityResponse:
        try:
            rules = game_rules(request.game)
            if len(request.players) > self.limits.max_players:
                raise BadRequest("players", f"{len(request.players)} players, expected 2 to {self.limits.max_players}")
            holes = [parse_field(p.cards, f"players[{i}].cards") for i, p in enumerate(request.players)]
            board = parse_field(request.board, "board")
            dead = parse_field(request.dead, "dead")
            args = (rules, holes, board, dead, request.samples, request.max_exhaustive, request.seed, self.limits)
            result = await asyncio.get_running_loop().run_in_executor(self.executor, equity, *args)
        except ValueError as err:
            raise bad_input(err) from None
        metrics.EQUITY_REQUESTS.labels(rules.name, "exhaustive" if result.exhaustive else "monte_carlo").inc()
        metrics.EQUITY_BOARDS.observe(result.boards)
        metrics.EQUITY_PLAYERS.observe(len(holes))
        metrics.EVALUATIONS.labels(rules.high.value).inc(result.boards * len(holes))
        if rules.low is not None:
            metrics.EVALUATIONS.labels(rules.low.value).inc(result.boards * len(holes))
        return evaluator_pb2.EquityResponse(
            players=[
                evaluator_pb2.PlayerEquity(win=w, tie=t, lose=lo, equity=e)
                for w, t, lo, e in zip(result.win, result.tie, result.lose, result.equity, strict=True)
            ],
            exhaustive=result.exhaustive,
            boards=result.boards,
            seed=result.seed,
        )
