"""``cardroom bench tournament``: a 1,000-entrant No-Limit Hold'em freeze-out MTT of random bots,
played whole in-process (issue 11: 'must finish a 1,000-entrant freeze-out MTT in minutes, not
hours'). Reports wall-clock and CPU seconds, hands and hands per second; ``--quick`` plays 200
entrants. No assertions (not a test); the evaluator's table build is done before timing.
"""

from __future__ import annotations

import argparse
import random
import time


def run(args: argparse.Namespace) -> None:
    from cardroom.core.engine import Variant
    from cardroom.core.tournament import Format, tournament_config
    from cardroom.core.tournament.simulation import SimulationOptions, simulate

    entrants = 200 if getattr(args, "quick", False) else 1000
    variant = Variant.parse("NT")
    warm = tournament_config(Format.SNG, variant, 10)
    simulate(warm, 10, random.Random(0))  # JIT / table build outside the figure
    config = tournament_config(Format.MTT, variant, entrants, late_registration_seconds=0.0)
    hands = [0]
    wall, cpu = time.perf_counter(), time.process_time()
    t = simulate(
        config,
        entrants,
        random.Random(1),
        options=SimulationOptions(late=0.0),
        on_hand=lambda _table, _record: hands.__setitem__(0, hands[0] + 1),
    )
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(
        f"{entrants:,}-entrant NLHE freeze-out MTT, random bots: {wall:.1f} s wall, {cpu:.1f} s CPU, "
        f"{hands[0]:,} hands ({hands[0] / cpu:,.0f} hands/s CPU), {len(t.events):,} events, "
        f"status {t.status.value}"
    )
