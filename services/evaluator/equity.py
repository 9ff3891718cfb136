"""Equity of board-game hands: exhaustive over the remaining boards when few enough remain,
Monte Carlo with a stated sample size otherwise; uses the NumPy batch evaluators (pure).

A request's cost is bounded by :class:`EquityLimits` (settings of the service, see
:mod:`evaluator.config`): the sample size, the exhaustive threshold a caller may ask for, the
players, and the hand evaluations in all (boards x players x rankings), each refused with
INVALID_ARGUMENT naming the field. Boards are drawn and evaluated :data:`CHUNK` at a time, so memory
stays flat whatever the sample size (1M samples used to take +450 MB at once).
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import cast

import numpy as np

from cardroom.core.cards import Card
from cardroom.core.evaluation import (
    Ranking,
    evaluate_high_batch,
    evaluate_low8_batch,
    evaluate_omaha_high_batch,
    evaluate_omaha_low8_batch,
)
from evaluator.cardtext import check_counts, check_distinct
from evaluator.errors import BadRequest
from evaluator.games import GameRules

DEFAULT_SAMPLES = 20_000
MAX_SAMPLES = 200_000
DEFAULT_MAX_EXHAUSTIVE = 50_000
MAX_EXHAUSTIVE = 2_000_000
MAX_PLAYERS = 10
#: Hand evaluations (boards x players x rankings) one request may cost: about a second of one core.
MAX_EVALUATIONS = 2_000_000
CHUNK = 50_000


@dataclass(frozen=True)
class EquityLimits:
    """The most one Equity request may ask for (the service's settings)."""

    max_samples: int = MAX_SAMPLES
    max_exhaustive: int = MAX_EXHAUSTIVE
    max_players: int = MAX_PLAYERS
    max_evaluations: int = MAX_EVALUATIONS

    def __post_init__(self) -> None:
        if not 1 <= self.max_samples or not 1 <= self.max_exhaustive or not 2 <= self.max_players <= 10:
            raise ValueError(f"equity limits out of range: {self}")
        if self.max_evaluations < 2 * min(DEFAULT_SAMPLES, self.max_samples):
            raise ValueError(f"equity limits: max_evaluations {self.max_evaluations} would refuse default requests")


_BATCH = {
    Ranking.HIGH: evaluate_high_batch,
    Ranking.OMAHA_HIGH: evaluate_omaha_high_batch,
    Ranking.LOW8: evaluate_low8_batch,
    Ranking.OMAHA_LOW8: evaluate_omaha_low8_batch,
}


@dataclass(frozen=True)
class EquityResult:
    win: list[float]
    tie: list[float]
    lose: list[float]
    equity: list[float]
    exhaustive: bool
    boards: int
    seed: int
    evaluations: int


def _completions(
    deck: np.ndarray, missing: int, count: int, exhaustive: bool, rng: np.random.Generator
) -> Iterator[np.ndarray]:
    """The ``count`` board completions (rows of ``missing`` cards), at most :data:`CHUNK` rows at a time."""
    if missing == 0:
        yield np.empty((1, 0), np.int8)
        return
    if exhaustive:
        combos = itertools.combinations(range(len(deck)), missing)
        for start in range(0, count, CHUNK):
            rows = min(CHUNK, count - start)
            flat = np.fromiter(
                itertools.chain.from_iterable(itertools.islice(combos, rows)), dtype=np.int16, count=rows * missing
            )
            yield deck[flat.reshape(rows, missing)]
        return
    for start in range(0, count, CHUNK):
        rows = min(CHUNK, count - start)
        yield deck[np.argsort(rng.random((rows, len(deck))), axis=1)[:, :missing]]


def _shares(rules: GameRules, holes: np.ndarray, boards: np.ndarray) -> np.ndarray:
    """Pot share of every player on every board, shape (players, boards)."""
    n = len(boards)
    rows = [np.concatenate([np.broadcast_to(h, (n, len(h))), boards], axis=1) for h in holes]
    high = np.stack([_BATCH[rules.high](r) for r in rows])
    high_win = high == high.max(axis=0)
    high_share = high_win / high_win.sum(axis=0)
    if rules.low is None:
        return high_share
    low = np.stack([_BATCH[rules.low](r) for r in rows])
    best_low = low.max(axis=0)
    low_win = (low == best_low) & (best_low > 0)
    has_low = best_low > 0
    low_share = np.divide(low_win, np.maximum(low_win.sum(axis=0), 1))
    return np.where(has_low, high_share / 2 + low_share / 2, high_share)


def equity(
    rules: GameRules,
    holes: Sequence[Sequence[Card]],
    board: Sequence[Card],
    dead: Sequence[Card],
    samples: int = 0,
    max_exhaustive: int = 0,
    seed: int = 0,
    limits: EquityLimits = EquityLimits(),
) -> EquityResult:
    """Win/tie/lose shares and expected pot share of each player."""
    if not rules.board_game:
        raise BadRequest("game", f"equity supports board games (holdem, omaha, omaha_hi_lo), not {rules.name}")
    if not 2 <= len(holes) <= limits.max_players:
        raise BadRequest("players", f"{len(holes)} players, expected 2 to {limits.max_players}")
    for i, hole in enumerate(holes):
        check_counts(hole, rules.hole, f"players[{i}].cards")
    check_counts(board, (0, 3, 4, 5), "board")
    check_distinct([("board", board), *((f"players[{i}].cards", h) for i, h in enumerate(holes)), ("dead", dead)])
    if samples < 0 or samples > limits.max_samples:
        raise BadRequest(
            "samples",
            f"must be 0 (default {DEFAULT_SAMPLES}) to this evaluator's limit {limits.max_samples}, got {samples}",
        )
    if max_exhaustive < 0 or max_exhaustive > limits.max_exhaustive:
        raise BadRequest(
            "max_exhaustive",
            f"must be 0 (default {DEFAULT_MAX_EXHAUSTIVE}) to this evaluator's limit {limits.max_exhaustive}, "
            f"got {max_exhaustive}",
        )
    samples = samples or DEFAULT_SAMPLES
    max_exhaustive = max_exhaustive or min(DEFAULT_MAX_EXHAUSTIVE, limits.max_exhaustive)
    used = {c.index for c in board} | {c.index for h in holes for c in h} | {c.index for c in dead}
    deck = np.array([i for i in range(52) if i not in used], np.int8)
    missing = 5 - len(board)
    if len(deck) < missing:
        raise BadRequest("dead", f"only {len(deck)} cards remain, the board needs {missing}")
    total = math.comb(len(deck), missing)
    exhaustive = total <= max_exhaustive
    count = total if exhaustive else samples
    players = len(holes)
    evaluations = count * players * (2 if rules.low is not None else 1)
    if evaluations > limits.max_evaluations:
        field = "max_exhaustive" if exhaustive else "samples"
        raise BadRequest(
            field,
            f"{count} {'remaining' if exhaustive else 'sampled'} boards x {players} players"
            f"{' x 2 halves' if rules.low is not None else ''} = {evaluations} hand evaluations, more than this "
            f"evaluator's limit {limits.max_evaluations}; ask for fewer {'boards' if exhaustive else 'samples'} "
            "or players",
        )
    if not exhaustive and seed == 0:
        entropy = cast(int, np.random.SeedSequence().entropy)  # drawn from the OS: always an int
        seed = int(entropy % (2**63)) or 1
    rng = np.random.default_rng(seed)
    holes_arr = np.array([[c.index for c in h] for h in holes], np.int8)
    board_arr = np.array([c.index for c in board], np.int8)
    win = np.zeros(players)
    tie = np.zeros(players)
    share_sum = np.zeros(players)
    n = 0
    for part in _completions(deck, missing, count, exhaustive, rng):
        boards = np.concatenate([np.broadcast_to(board_arr, (len(part), len(board_arr))), part], axis=1)
        shares = _shares(rules, holes_arr, boards)
        win += (shares >= 1.0 - 1e-12).sum(axis=1)
        tie += ((shares > 0) & (shares < 1.0 - 1e-12)).sum(axis=1)
        share_sum += shares.sum(axis=1)
        n += len(part)
    lose = n - win - tie
    evaluations = n * players * (2 if rules.low is not None else 1)
    return EquityResult(
        win=(win / n).tolist(),
        tie=(tie / n).tolist(),
        lose=(lose / n).tolist(),
        equity=(share_sum / n).tolist(),
        exhaustive=exhaustive,
        boards=n,
        seed=0 if exhaustive else seed,
        evaluations=evaluations,
    )
