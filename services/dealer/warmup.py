"""Load the hand evaluator's lookup tables before the dealer reports SERVING.

The tables (a few seconds to build on a cold start) are built on first use; left to the
first showdown after a restart, that build would run on the dealer's single event loop and
stall every table. :func:`warm_evaluator` evaluates one hand of each ranking the engine
uses at a showdown (and the stud up-card comparisons), so each lazily built table exists;
the server runs it in a worker thread before it starts serving.
"""

from __future__ import annotations

import logging
import time

from cardroom.core.cards import Card

log = logging.getLogger("dealer.warmup")

_SEVEN = [Card.parse(c) for c in ("As", "Kd", "7h", "4c", "2s", "9d", "Th")]
_OMAHA_HOLE = [Card.parse(c) for c in ("Ah", "2d", "3c", "Ks")]
_BOARD = [Card.parse(c) for c in ("4h", "5d", "9c", "Jd", "Qs")]


def warm_evaluator() -> list[str]:
    """Build every evaluator table the engine needs; returns the rankings exercised."""
    from cardroom.core import evaluation as ev

    started = time.perf_counter()
    done: list[str] = []
    idx = [c.index for c in _SEVEN]
    ev.high_value7(*idx)
    done.append("high7")
    for n in (5, 6, 7):
        ev.evaluate_high(_SEVEN[:n]).describe()
    done.append("high")
    ev.evaluate_omaha_high(_OMAHA_HOLE, _BOARD)
    ev.evaluate_omaha_low8(_OMAHA_HOLE, _BOARD)
    done.append("omaha")
    ev.evaluate_low8(_SEVEN)
    done.append("low8")
    ev.evaluate_deuce7(_SEVEN[:5])
    done.append("deuce7")
    ev.evaluate_soko(_SEVEN[:5])
    done.append("soko")
    ev.showing_value(_SEVEN[:4])
    ev.bring_in_key(_SEVEN[0])
    done.append("stud")
    log.info(
        "evaluator tables loaded",
        extra={"rankings": ",".join(done), "seconds": round(time.perf_counter() - started, 3)},
    )
    return done
