"""``cardroom phh replay FILE...``: replay PHH hand histories (ours or pokerkit's).

Prints one JSON line per hand: ``{"file", "hand", "variant", "players", "starting_stacks",
"finishing_stacks", "results", "agrees"}`` (``agrees``: the replay ends with the record's own
``finishing_stacks``; null when it has none); a hand that cannot be replayed prints ``{"file",
"hand", "error"}`` (a ``PHHError`` naming the file and the action index), and either, or a
disagreement, makes the exit status 1. A ``.phhs`` file (several hands as TOML tables) gives
one line per table.
"""

from __future__ import annotations

import argparse
import json
import sys
import tomllib
from typing import Any

from cardroom.core import phh
from cardroom.core.engine import IllegalAction


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("phh", help="Poker Hand History (PHH) tools")
    sub = parser.add_subparsers(dest="phh_command", metavar="SUBCOMMAND")
    replay = sub.add_parser("replay", help="replay PHH files; one JSON line per hand with finishing_stacks")
    replay.add_argument("files", nargs="+", metavar="FILE")
    replay.set_defaults(func=run)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def _hands(fields: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    if "actions" in fields:
        return [(None, fields)]
    return [(name, table) for name, table in fields.items() if isinstance(table, dict)]


def run(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        try:
            with open(path, "rb") as fp:
                fields = tomllib.load(fp)
        except (OSError, tomllib.TOMLDecodeError) as exc:
            print(json.dumps({"file": path, "error": str(exc)}))
            status = 1
            continue
        for name, table in _hands(fields):
            try:
                replay = phh.replay_fields(table, source=path if name is None else f"{path}[{name}]")
            except (phh.PHHError, IllegalAction, KeyError, ValueError, IndexError, TypeError) as exc:
                print(json.dumps({"file": path, "hand": name, "error": f"{type(exc).__name__}: {exc}"}))
                status = 1
                continue
            hand = replay.hand
            print(
                json.dumps(
                    {
                        "file": path,
                        "hand": name,
                        "variant": hand.variant.code,
                        "players": hand.players,
                        "starting_stacks": hand.starting_stacks,
                        "finishing_stacks": replay.finishing_stacks,
                        "results": [s - t for s, t in zip(hand.stacks, hand.starting_stacks, strict=True)],
                        "agrees": replay.agrees,
                    }
                )
            )
            if replay.agrees is False:
                status = 1
    sys.stdout.flush()
    return status
