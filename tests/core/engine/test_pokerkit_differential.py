"""Differential tests against pokerkit 0.7.7 through PHH, in both directions (issue 4).

Identical finishing stacks on every hand, under pokerkit-compatible settings
(``phh.POKERKIT_OPTIONS``: odd chips all to the first winner with pokerkit's pot merging,
no fold when checking is free, no Stud double bet, big blind not counted toward the cap).
The odd-chip difference itself is tested explicitly in test_showdown.py.

Hands per variant and direction: ``CARDROOM_DIFF_HANDS`` (default 10,000, the issue's bar),
played in chunks with their own seeds on every core (a process pool), so the 140,000 hands
take a few minutes of wall-clock time on two cores.

Hi/Lo hands hit by pokerkit's side-pot low bug (``pokerkit_hilo_side_pot_bug``: it splits the
low half of a side pot nobody in it qualifies for) are counted, not compared; they must stay
rare (< 2%), and test_showdown.py pins one down explicitly.

Known pokerkit 0.7.7 quirks worked around in the generator (see pokerkit_diff.py): its
``FO/8`` class bets pot-limit, so pokerkit's own random FO/8 hands bet the minimum and stop at
4 bets; a short all-in bring-in is a "completion" for pokerkit, so Stud stacks cover the ante
and the bring-in.
"""

from __future__ import annotations

import multiprocessing
import os
import warnings
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor

import pytest

from .pokerkit_diff import SHARED, ours_to_pokerkit, pokerkit_to_ours

HANDS = int(os.environ.get("CARDROOM_DIFF_HANDS", "10000"))
SEED = 20261130
WORKERS = max(1, min(4, os.cpu_count() or 1))

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]


@pytest.fixture(scope="module")
def pool() -> Iterator[ProcessPoolExecutor]:
    """A fresh spawned process per chunk. Forked workers reused across the variants inherited the
    test worker's heap and built up state of their own: the seventh variant (F2L3D, 57 s alone)
    still ran after 15 minutes in the suite, both workers busy in pokerkit, and CI timed out on it.
    A chunk that outlives its test is terminated, never waited for."""
    executor = ProcessPoolExecutor(WORKERS, mp_context=multiprocessing.get_context("spawn"), max_tasks_per_child=1)
    try:
        yield executor
    finally:
        executor.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():
            child.terminate()


def _sweep(pool: ProcessPoolExecutor, direction, code: str) -> tuple[list[str], list[str]]:
    """Run ``direction`` over HANDS hands of ``code`` in WORKERS chunks; (mismatches, known)."""
    sizes = [HANDS // WORKERS + (i < HANDS % WORKERS) for i in range(WORKERS)]
    futures = [pool.submit(_chunk, direction, code, n, SEED + i) for i, n in enumerate(sizes) if n]
    bad: list[str] = []
    known: list[str] = []
    for future in futures:
        chunk_bad, chunk_known = future.result()
        bad += chunk_bad
        known += chunk_known
    return bad, known


def _chunk(direction, code: str, hands: int, seed: int) -> tuple[list[str], list[str]]:
    warnings.simplefilter("ignore", UserWarning)  # as the module's mark, in the spawned process
    known: list[str] = []
    return direction(code, hands, seed=seed, known=known), known


@pytest.mark.parametrize("code", list(SHARED))
def test_our_phh_replayed_by_pokerkit_gives_identical_finishing_stacks(pool, code):
    bad, known = _sweep(pool, ours_to_pokerkit, code)
    assert not bad, f"{len(bad)} mismatches; first:\n{bad[0]}"
    assert len(known) <= HANDS // 50


@pytest.mark.parametrize("code", list(SHARED))
def test_pokerkit_phh_replayed_by_us_gives_identical_finishing_stacks(pool, code):
    bad, known = _sweep(pool, pokerkit_to_ours, code)
    assert not bad, f"{len(bad)} mismatches; first:\n{bad[0]}"
    assert len(known) <= HANDS // 50
