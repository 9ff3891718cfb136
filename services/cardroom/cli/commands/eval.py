"""``cardroom eval``: evaluate one hand from text, or a batch from a ``.npy`` file.

* ``cardroom eval "Ah Kh Qh Jh Th 2c 3d"`` prints the category, value, five cards and description.
  With ``--game omaha`` / ``omaha8`` the first four cards are the hole cards, the rest the board.
* ``cardroom eval --game GAME --in HANDS.npy --out VALUES.npy`` evaluates an (N, k) integer array
  of card indices ``4 * rank + suit`` (omaha and omaha8: 4 hole then 5 board columns) and saves
  the int32 values (low8 / omaha8: 0 where no low qualifies).

Bad input (unknown card or game, duplicate cards, wrong card count, index outside 0..51,
unreadable file) prints a message to stderr and exits with status 2.
"""

from __future__ import annotations

import argparse
import sys

GAMES = ("high", "omaha", "low8", "omaha8", "deuce7", "soko")


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="evaluate a poker hand (text) or a batch of hands (.npy)",
        description="Evaluate a hand given as text, or a NumPy batch of card indices (4*rank+suit).",
    )
    parser.add_argument("cards", nargs="?", help='the hand as text, e.g. "Ah Kh Qh Jh Th 2c 3d"')
    parser.add_argument("--game", choices=GAMES, default="high", help="hand ranking (default: high)")
    parser.add_argument("--in", dest="infile", metavar="HANDS.npy", help="batch input: (N, k) integer array")
    parser.add_argument("--out", dest="outfile", metavar="VALUES.npy", help="batch output: (N,) int32 values")
    parser.set_defaults(func=run)


def _fail(message: str) -> int:
    print(f"cardroom eval: error: {message}", file=sys.stderr)
    return 2


def run(args: argparse.Namespace) -> int:
    if args.infile or args.outfile:
        if args.cards:
            return _fail("give either a hand as text or --in/--out, not both")
        if not (args.infile and args.outfile):
            return _fail("batch mode needs both --in HANDS.npy and --out VALUES.npy")
        return _run_batch(args.game, args.infile, args.outfile)
    if not args.cards:
        return _fail('no hand given: e.g. cardroom eval "Ah Kh Qh Jh Th 2c 3d"')
    return _run_one(args.game, args.cards)


def _run_one(game: str, text: str) -> int:
    from cardroom.core.cards import format_cards, parse_cards
    from cardroom.core.evaluation import Ranking, evaluate

    ranking = Ranking(game)
    try:
        cards = parse_cards(text)
        if ranking in (Ranking.OMAHA_HIGH, Ranking.OMAHA_LOW8):
            value = evaluate(ranking, cards[:4], cards[4:])
        else:
            value = evaluate(ranking, cards)
    except ValueError as exc:
        return _fail(str(exc))
    if value is None:
        print("no qualifying low (8 or better)")
        return 0
    print(f"category: {value.category.label}")
    print(f"value: {value.value}")
    print(f"cards: {format_cards(value.cards)}")
    print(f"description: {value.describe()}")
    return 0


def _run_batch(game: str, infile: str, outfile: str) -> int:
    import numpy as np

    from cardroom.core.evaluation import batch

    funcs = {
        "high": batch.evaluate_high_batch,
        "omaha": batch.evaluate_omaha_high_batch,
        "low8": batch.evaluate_low8_batch,
        "omaha8": batch.evaluate_omaha_low8_batch,
        "deuce7": batch.evaluate_deuce7_batch,
        "soko": batch.evaluate_soko_batch,
    }
    try:
        hands = np.load(infile, allow_pickle=False)
    except (OSError, ValueError) as exc:
        return _fail(f"cannot read {infile}: {exc}")
    try:
        values = funcs[game](hands)
    except ValueError as exc:
        return _fail(str(exc))
    try:
        np.save(outfile, values)
    except OSError as exc:
        return _fail(f"cannot write {outfile}: {exc}")
    print(f"{len(values)} hands evaluated ({game}) -> {outfile}")
    return 0
