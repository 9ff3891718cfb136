"""``cardroom simulate --session`` (alias ``cardroom session-simulate``): a simulated cash-game
session at one table (issue 5).

``cardroom simulate --session --game CODE --players N --hands H --seed S [--out DIR]`` plays H
hands of variant CODE (``NT``, ``FT``, ``PO``, ``FO/8``, ``F7S``, ``F5CD``, ``F2L3D``, ``FSK``,
...) where players from a pool of N join (posting or waiting for the big blind), sit out,
come back, leave, bust and rebuy, disconnect and time out. With ``--out`` each hand is
written as ``DIR/hand-NNNNNN.phh`` (PHH with ``seats``, ``seat_count``, ``players``,
``_button_seat``, ``_dead_blinds``, ``_rake``). Chip conservation (stacks + rake) is asserted
after every hand; the summary is printed as one JSON line. The same seed gives the same
session. Bad arguments exit with status 2.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "session-simulate",
        help="simulate a cash-game session at one table (PHH per hand)",
        description="Play a random cash-game session: joins, sit-outs, returns, departures, "
        "rebuys, timeouts; one PHH file per hand with --out.",
    )
    parser.add_argument("--game", default="NT", help="variant code, e.g. NT, FT, PO, FO/8, F7S, F2L3D")
    parser.add_argument("--players", type=int, default=6, help="size of the pool of players (>= 2)")
    parser.add_argument("--hands", type=int, default=100, help="hands to play")
    parser.add_argument("--seed", type=int, default=0, help="random seed")
    parser.add_argument("--out", metavar="DIR", help="write one PHH file per hand into DIR")
    parser.set_defaults(func=run)
    from cardroom.cli.commands import simulate

    simulate.add_mode(
        "session",
        lambda p: p.add_argument(
            "--session", action="store_true", help="a cash-game session at one table (see session-simulate)"
        ),
        run,
    )


def run(args: argparse.Namespace) -> int:
    from cardroom.core.engine import Variant
    from cardroom.core.table.session import CashSession
    from cardroom.core.table.table import HandRecord

    try:
        variant = Variant.parse(args.game)
    except ValueError as exc:
        print(f"cardroom session-simulate: error: {exc}", file=sys.stderr)
        return 2
    if args.players < 2 or args.hands < 0:
        print("cardroom session-simulate: error: need --players >= 2 and --hands >= 0", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)

    def write(record: HandRecord, gap: bool) -> None:
        if out is not None:
            (out / f"hand-{record.number:06d}.phh").write_text(record.phh())

    session = CashSession(variant, args.players, random.Random(args.seed), name=f"session-{args.seed}")
    stats = session.run(args.hands, write)
    print(
        json.dumps(
            {
                "game": variant.code,
                "hands": stats.hands,
                "bought_in": stats.bought_in,
                "cashed_out": stats.cashed_out,
                "on_table": session.table.chips_on_table(),
                "rake": stats.rake,
                "timeouts": stats.timeouts,
                "artificial_all_ins": stats.artificial_all_ins,
                "idle_rounds": stats.idle_rounds,
            }
        )
    )
    return 0
