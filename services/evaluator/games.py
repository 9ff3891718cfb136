"""Games the evaluator knows: their rankings and how many cards a player and the board hold."""

from __future__ import annotations

from dataclasses import dataclass

from cardroom.core.evaluation import Ranking
from cardroom.v1 import common_pb2, evaluator_pb2

RANKINGS: dict[evaluator_pb2.Ranking, Ranking] = {
    evaluator_pb2.RANKING_HIGH: Ranking.HIGH,
    evaluator_pb2.RANKING_OMAHA_HIGH: Ranking.OMAHA_HIGH,
    evaluator_pb2.RANKING_LOW8: Ranking.LOW8,
    evaluator_pb2.RANKING_OMAHA_LOW8: Ranking.OMAHA_LOW8,
    evaluator_pb2.RANKING_DEUCE7: Ranking.DEUCE7,
    evaluator_pb2.RANKING_SOKO: Ranking.SOKO,
}
RANKING_PROTO = {ranking: proto for proto, ranking in RANKINGS.items()}


@dataclass(frozen=True)
class GameRules:
    """Card counts and rankings of one game (``low`` is the hi/lo game's second ranking)."""

    name: str
    high: Ranking
    low: Ranking | None
    hole: tuple[int, ...]
    board: tuple[int, ...]
    total: tuple[int, ...]
    board_game: bool


GAMES: dict[int, GameRules] = {
    common_pb2.GAME_HOLDEM: GameRules("holdem", Ranking.HIGH, None, (2,), (5,), (7,), True),
    common_pb2.GAME_OMAHA: GameRules("omaha", Ranking.OMAHA_HIGH, None, (4,), (5,), (9,), True),
    common_pb2.GAME_OMAHA_HI_LO: GameRules(
        "omaha_hi_lo", Ranking.OMAHA_HIGH, Ranking.OMAHA_LOW8, (4,), (5,), (9,), True
    ),
    common_pb2.GAME_STUD: GameRules("stud", Ranking.HIGH, None, (5, 6, 7), (0, 1), (5, 6, 7), False),
    common_pb2.GAME_STUD_HI_LO: GameRules(
        "stud_hi_lo", Ranking.HIGH, Ranking.LOW8, (5, 6, 7), (0, 1), (5, 6, 7), False
    ),
    common_pb2.GAME_DEUCE_SEVEN: GameRules("deuce_seven", Ranking.DEUCE7, None, (5,), (0,), (5,), False),
    common_pb2.GAME_SOKO: GameRules("soko", Ranking.SOKO, None, (5,), (0,), (5,), False),
}

#: (hole, board) counts each ranking accepts in Evaluate.
RANKING_COUNTS: dict[Ranking, tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]] = {
    # ranking: (hole counts, board counts, total counts); () = any
    Ranking.HIGH: ((), (), (5, 6, 7)),
    Ranking.LOW8: ((), (), (5, 6, 7)),
    Ranking.OMAHA_HIGH: ((4,), (3, 4, 5), ()),
    Ranking.OMAHA_LOW8: ((4,), (3, 4, 5), ()),
    Ranking.DEUCE7: ((), (), (5,)),
    Ranking.SOKO: ((), (), (5,)),
}
