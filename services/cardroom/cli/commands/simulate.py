"""``cardroom simulate --game CODE --players N --hands H --seed S [--out DIR]``.

Plays H hands with random legal actions (uniform over the legal action kinds, uniform
amounts; see ``cardroom.core.engine.simulation``), checks chip conservation on every hand,
prints one JSON line per hand and, with ``--out``, writes one PHH file per hand
(``DIR/hand-000001.phh``). The same seed gives the same hands.

Extension hook: another command module may add a mode (e.g. ``--session`` for table-level
sessions) from its own ``register()``, which runs after this one (modules are registered
in name order; a mode added earlier is applied when this module registers)::

    from cardroom.cli.commands import simulate
    simulate.add_mode("session", lambda p: p.add_argument("--session", action="store_true"),
                      run_session)   # run_session(args) -> int, used when args.session

``run`` hands over to the first mode whose ``dest`` attribute is truthy on ``args``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
from collections.abc import Callable

from cardroom.core import phh
from cardroom.core.engine import Variant, default_stakes
from cardroom.core.engine.simulation import random_hand

PARSER: argparse.ArgumentParser | None = None
MODES: list[tuple[str, Callable[[argparse.ArgumentParser], object], Callable[[argparse.Namespace], int]]] = []


def add_mode(
    dest: str, add_arguments: Callable[[argparse.ArgumentParser], object], runner: Callable[[argparse.Namespace], int]
) -> None:
    """Register an alternative simulate mode, used when ``args.<dest>`` is truthy. Works
    whether it is called before or after :func:`register`."""
    if any(known == dest for known, _, _ in MODES):
        return  # the parser is built more than once in one process (tests): register once
    if PARSER is not None:
        add_arguments(PARSER)
    MODES.append((dest, add_arguments, runner))


def register(subparsers: argparse._SubParsersAction) -> None:
    global PARSER
    parser = subparsers.add_parser("simulate", help="play random hands (optionally write PHH files)")
    parser.add_argument(
        "--game", required=True, help="variant code: NT, FT, PO, FO/8, F7S, F7S/8, F2L3D, F5CD, FSK, ..."
    )
    parser.add_argument("--players", type=int, default=6)
    parser.add_argument("--hands", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", metavar="DIR", help="write one PHH file per hand to DIR")
    parser.add_argument("--quiet", action="store_true", help="print only the summary line")
    parser.set_defaults(func=run)
    PARSER = parser
    for _, add_arguments, _ in MODES:  # modes registered before this module
        add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    for dest, _, runner in MODES:
        if getattr(args, dest, None):
            return runner(args)
    try:
        variant = Variant.parse(args.game)
    except ValueError as exc:
        print(f"cardroom simulate: {exc}")
        return 2
    if not 2 <= args.players <= variant.spec.max_players:
        print(f"cardroom simulate: {variant.code} is played by 2 to {variant.spec.max_players} players")
        return 2
    if args.out:
        os.makedirs(args.out, exist_ok=True)
    rng = random.Random(args.seed)
    stakes = default_stakes(variant)
    moved = 0
    for h in range(1, args.hands + 1):
        hand = random_hand(variant, args.players, rng, stakes=stakes)
        net = hand.results()
        if sum(net.values()) + hand.rake_taken != 0:
            print(f"cardroom simulate: chips not conserved in hand {h}: {net}")
            return 1
        moved += sum(v for v in net.values() if v > 0)
        if args.out:
            path = os.path.join(args.out, f"hand-{h:06d}.phh")
            with open(path, "w", encoding="utf-8") as fp:
                fp.write(phh.dumps(hand, hand=h))
        if not args.quiet:
            print(
                json.dumps(
                    {
                        "hand": h,
                        "variant": variant.code,
                        "starting_stacks": hand.starting_stacks,
                        "finishing_stacks": hand.stacks,
                    }
                )
            )
    print(
        json.dumps(
            {
                "summary": True,
                "variant": variant.code,
                "hands": args.hands,
                "players": args.players,
                "seed": args.seed,
                "chips_won": moved,
                "chips_conserved": True,
            }
        )
    )
    return 0
