"""``cardroom bench evaluation``: hand evaluation speed next to phevaluator, treys and pokerkit.

All figures are measured in this run on the same random hands, single-threaded; ratios are
ours / reference. Batch figures include validation of every row; reference libraries are
called once per hand from Python (they have no batch API). Issue 3 goals (single core): batch
7-card high >= 100M/s, batch Omaha >= 10M hands/s, per-hand 7-card call >= 1M/s, table build at
import <= 1 s.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial

import numpy as np


def _hands(n: int, k: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    out = np.empty((n, k), np.int8)
    step = 500_000
    for s in range(0, n, step):
        m = min(step, n - s)
        out[s : s + m] = np.argsort(rng.random((m, 52)), axis=1)[:, :k]
    return out


def _call_each(fn: Callable[..., int], cards: list[list[int]]) -> list[int]:
    return [fn(*c) for c in cards]


def _rate(fn: Callable[[], object], count: int, repeat: int = 3) -> float:
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t)
    return count / best


def _fmt(rate: float) -> str:
    if rate >= 1e6:
        return f"{rate / 1e6:9.2f} M/s"
    return f"{rate / 1e3:9.1f} k/s"


def _row(label: str, ours: float, refs: dict[str, float]) -> None:
    parts = [f"{label:34s} ours {_fmt(ours)}"]
    for name, r in refs.items():
        parts.append(f"{name} {_fmt(r)} (x{ours / r:,.1f})")
    print("  ".join(parts), flush=True)


def _import_time() -> float:
    code = (
        "import time, numpy, numba; t = time.perf_counter(); import cardroom.core.evaluation; "
        "print(time.perf_counter() - t)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return float(out.stdout.strip())


def _table_build_time() -> float:
    from cardroom.core.evaluation import tables as t

    funcs = [
        t.flush_suit_table,
        t.count_vectors,
        t.five_card_codes,
        t.high_codes,
        t.flush_table,
        t.nonflush_table,
        t.nonflush_table5,
        t.deuce7_codes,
    ]
    for f in funcs:
        f.cache_clear()
    start = time.perf_counter()
    t.flush_table(), t.nonflush_table(7), t.nonflush_table5(), t.deuce7_codes()
    return time.perf_counter() - start


def run(args: argparse.Namespace) -> None:
    from phevaluator import _pheval
    from treys import Card as TCard, Evaluator

    from cardroom.core.cards import Card
    from cardroom.core.evaluation import (
        evaluate_deuce7_batch,
        evaluate_high,
        evaluate_high_batch,
        evaluate_low8_batch,
        evaluate_omaha_high_batch,
        evaluate_omaha_low8_batch,
        evaluate_soko_batch,
        high_value7,
    )

    quick = bool(getattr(args, "quick", False))
    n_batch = 2_000_000 if quick else 20_000_000
    n_call = 50_000 if quick else 300_000
    n_treys = 5_000 if quick else 30_000

    print(f"import cardroom.core.evaluation (fresh process, tables built): {_import_time():.3f} s   [goal <= 1 s]")
    print(f"table build in-process (high, flush, 2-7):                 {_table_build_time():.3f} s")

    h7 = _hands(n_batch, 7, seed=1)
    evaluate_high_batch(h7[:100])  # compile / load the numba cache outside the timing
    ours = _rate(lambda: evaluate_high_batch(h7), n_batch)
    calls = h7[:n_call].tolist()
    ph = _rate(lambda: [_pheval.evaluate_7cards(*c) for c in calls], n_call)
    tcards = [TCard.new(str(Card(i))) for i in range(52)]
    tev = Evaluator()
    th = [[tcards[i] for i in c] for c in calls[:n_treys]]
    tr = _rate(lambda: [tev.evaluate(c[:2], c[2:]) for c in th], n_treys, repeat=1)
    print("7-card high [goal batch >= 100M/s, per call >= 1M/s]")
    _row("  batch (N, 7) -> values", ours, {"phevaluator/call": ph, "treys/call": tr})
    per = _rate(lambda: [high_value7(*c) for c in calls], n_call)
    _row("  per call high_value7(i0..i6)", per, {"phevaluator/call": ph, "treys/call": tr})
    cs = [[Card(i) for i in c] for c in calls[: n_call // 10]]
    full = _rate(lambda: [evaluate_high(c) for c in cs], len(cs), repeat=1)
    _row("  per call evaluate_high -> HandValue", full, {"phevaluator/call": ph})

    n_om = n_batch // 4
    h9 = _hands(n_om, 9, seed=2)
    evaluate_omaha_high_batch(h9[:100])
    evaluate_omaha_low8_batch(h9[:100])
    ours = _rate(lambda: evaluate_omaha_high_batch(h9), n_om)
    ocalls = h9[: n_call // 4].tolist()
    ph = _rate(lambda: [_pheval.evaluate_omaha_cards(*c[4:], *c[:4]) for c in ocalls], len(ocalls))
    print("Omaha [goal batch >= 10M hands/s]")
    _row("  batch omaha high (N, 9)", ours, {"phevaluator/call": ph})
    ours8 = _rate(lambda: evaluate_omaha_low8_batch(h9), n_om)
    refs: dict[str, float] = {}
    try:
        from pokerkit import OmahaEightOrBetterLowHand

        pk = [("".join(str(Card(i)) for i in c[:4]), "".join(str(Card(i)) for i in c[4:])) for c in ocalls[:2000]]

        def pk_low() -> None:
            for hole, board in pk:
                try:
                    OmahaEightOrBetterLowHand.from_game(hole, board)
                except ValueError:
                    pass

        refs["pokerkit/call"] = _rate(pk_low, len(pk), repeat=1)
    except ImportError:  # pragma: no cover
        pass
    _row("  batch omaha 8-or-better low (N, 9)", ours8, refs)

    print("other batches")
    h5 = _hands(n_batch // 4, 5, seed=3)
    for label, fn, arr in [
        ("  batch high (N, 5)", evaluate_high_batch, h5),
        ("  batch low8 (N, 7)", evaluate_low8_batch, h7[: n_batch // 4]),
        ("  batch deuce7 (N, 5)", evaluate_deuce7_batch, h5),
        ("  batch soko (N, 5)", evaluate_soko_batch, h5),
    ]:
        fn(arr[:100])
        calls5 = arr[: n_call // 4].tolist()
        refs = {}
        if arr.shape[1] == 5 and fn is evaluate_high_batch:
            refs["phevaluator/call"] = _rate(partial(_call_each, _pheval.evaluate_5cards, calls5), len(calls5))
        _row(label, _rate(partial(fn, arr), len(arr)), refs)
