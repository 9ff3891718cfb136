"""``cardroom verify-hand FILE_OR_-...``: check dealer hand records against their revealed seeds.

Each record is the PHH text the dealer publishes on ``cardroom.hand.records`` (with
``_seed`` and ``_commitment``). Prints one JSON line per hand: ``{"hand_id", "ok",
"problems"}``. Exit status 0 when every hand verifies, 1 when one does not, 2 on unreadable
input.
"""

from __future__ import annotations

import argparse
import json
import sys

from cardroom.core.fairness import verify_text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "verify-hand", help="verify hand records: the commitment and the cards dealt from the revealed seed"
    )
    parser.add_argument("files", nargs="+", metavar="FILE_OR_-", help="PHH hand record(s); '-' reads stdin")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    status = 0
    for path in args.files:
        try:
            text = sys.stdin.read() if path == "-" else open(path, encoding="utf-8").read()
        except OSError as exc:
            print(json.dumps({"file": path, "ok": False, "problems": [str(exc)]}))
            status = max(status, 2)
            continue
        for verdict in verify_text(text):
            print(
                json.dumps(
                    {"file": path, "hand_id": verdict.hand_id, "ok": verdict.ok, "problems": list(verdict.problems)}
                )
            )
            if not verdict.ok:
                status = max(status, 1)
    sys.stdout.flush()
    return status
