"""``cardroom simulate --tournament --format FMT --game CODE --entrants N --seed S [--out DIR]``.

A whole tournament of random bots in-process (``cardroom.core.tournament.simulation``):
``FMT`` is one of mtt, sng, headsup, rebuy, shootout, satellite, freeroll. Prints the results
table (place, player, prize in cents) and one JSON summary line; ``--out DIR`` writes every
hand as PHH (``DIR/hand-NNNNNN-tTTT.phh``) and the tournament events as JSON lines
(``DIR/events.jsonl``). The same seed gives the same tournament. Bad arguments: status 2.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import Counter
from pathlib import Path

FORMATS = ("mtt", "sng", "headsup", "rebuy", "shootout", "satellite", "freeroll")


def _arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tournament", action="store_true", help="a whole tournament of random bots")
    parser.add_argument("--format", choices=FORMATS, default="mtt", help="tournament format (with --tournament)")
    parser.add_argument("--entrants", type=int, default=200, help="entrants (with --tournament)")


def register(subparsers: argparse._SubParsersAction) -> None:
    from cardroom.cli.commands import simulate

    simulate.add_mode("tournament", _arguments, run)


def run(args: argparse.Namespace) -> int:
    from cardroom.core.engine import Variant
    from cardroom.core.table.table import HandRecord
    from cardroom.core.tournament import Format, tournament_config
    from cardroom.core.tournament.events import event_record
    from cardroom.core.tournament.simulation import SimulationOptions, simulate

    try:
        variant = Variant.parse(args.game)
    except ValueError as exc:
        print(f"cardroom simulate: error: {exc}", file=sys.stderr)
        return 2
    fmt = Format(args.format)
    if args.entrants < 2 or (fmt is Format.HEADS_UP and args.entrants % 2):
        print("cardroom simulate: error: need --entrants >= 2 (heads-up: an even number)", file=sys.stderr)
        return 2
    out = Path(args.out) if args.out else None
    if out is not None:
        out.mkdir(parents=True, exist_ok=True)
    count = [0]

    def write(table: int, record: HandRecord) -> None:
        count[0] += 1
        if out is not None:
            (out / f"hand-{count[0]:06d}-t{table:03d}.phh").write_text(record.phh())

    config = tournament_config(fmt, variant, args.entrants)
    t = simulate(config, args.entrants, random.Random(args.seed), options=SimulationOptions(late=0.0), on_hand=write)
    if out is not None:
        with (out / "events.jsonl").open("w", encoding="utf-8") as fp:
            for event in t.events:
                fp.write(json.dumps(event_record(event)) + "\n")
    results = t.results()
    print(f"{'place':>9}  {'player':<12} {'prize':>12}")
    for r in results:
        place = str(r.place) if r.last_place == r.place else f"{r.place}-{r.last_place}"
        print(f"{place:>9}  {r.player:<12} {r.prize:>12}{'  seat' if r.seat else ''}")
    kinds = Counter(type(e).__name__ for e in t.events)
    print(
        json.dumps(
            {
                "summary": True,
                "format": fmt.value,
                "game": variant.code,
                "seed": args.seed,
                "status": t.status.value,
                "entrants": len(t.entrants),
                "hands": count[0],
                "prize_pool": t.prize_pool,
                "collected": t.collected,
                "fees": t.fees,
                "rebuys": t.rebuys_sold,
                "add_ons": t.add_ons_sold,
                "places_paid": t.places_paid(),
                "winner": next((r.player for r in results if r.place == 1), None),
                "prizes_paid": sum(r.prize for r in results),
                "chips_in_play": t.chips_in_play(),
                "events": dict(sorted(kinds.items())),
            }
        )
    )
    return 0
