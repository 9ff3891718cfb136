"""``cardroom version``: print the package version."""

from __future__ import annotations

import argparse

import cardroom


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("version", help="print the Cardroom version")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    print(f"cardroom {cardroom.__version__}")
    return 0
