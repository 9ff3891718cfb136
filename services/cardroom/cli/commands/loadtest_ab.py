"""``cardroom loadtest-ab``: two settings of the card room compared by alternating load-test runs."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

DESCRIPTION = """Run `cardroom loadtest` alternately with two environments (A, B, A, B, ...), each run with
its own bare-gRPC baseline, and print every run and the means side by side with B / A. On a shared machine
the speed moves between runs as much as most changes do: compare means of several pairs, never one run each.
Example: cardroom loadtest-ab --a GATEWAY_TABLE_FEEDS=on --b GATEWAY_TABLE_FEEDS=off --pairs 3 --out /tmp/ab
-- --start-stack --scenario max --tables 20 --ramp 10 --steady 40"""


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "loadtest-ab",
        help="compare two settings by alternating load-test runs",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--a", action="append", default=[], metavar="NAME=VALUE", help="side A's environment")
    parser.add_argument("--b", action="append", default=[], metavar="NAME=VALUE", help="side B's environment")
    parser.add_argument("--pairs", type=int, default=3, help="runs of each side (default 3)")
    parser.add_argument("--out", type=Path, required=True, help="directory: a-N/ and b-N/ reports, compare.json")
    parser.add_argument("loadtest", nargs=argparse.REMAINDER, help="after --: the loadtest arguments (not --out)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from cardroom.client.loadtest.compare import compare, parse_env, plan, read, render

    loadtest = list(args.loadtest)
    if loadtest[:1] == ["--"]:
        loadtest = loadtest[1:]
    if any(a == "--out" or a.startswith("--out=") for a in loadtest):
        print("loadtest-ab: --out is its own (each run gets a directory under it)", file=sys.stderr)
        return 2
    try:
        runs = plan(args.pairs, parse_env(args.a), parse_env(args.b), args.out)
    except ValueError as exc:
        print(f"loadtest-ab: {exc}", file=sys.stderr)
        return 2
    results = []
    for one in runs:
        one.out.mkdir(parents=True, exist_ok=True)
        setting = " ".join(f"{k}={v}" for k, v in one.env.items()) or "(no change)"
        print(f"{one.side}{one.index}: {setting}", flush=True)
        command = [sys.executable, "-m", "cardroom.cli.main", "loadtest", *loadtest, "--out", str(one.out)]
        with (one.out / "loadtest.log").open("w") as log:
            subprocess.run(command, env={**os.environ, **one.env}, stdout=log, stderr=subprocess.STDOUT, check=False)
        results.append((one, read(one)))
    summary = compare(results)
    (args.out / "compare.json").write_text(json.dumps(summary, indent=2))
    print(render(summary))
    return 0 if all(got is not None for _, got in results) else 3
