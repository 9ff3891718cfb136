"""``cardroom bench [NAME...]``: run the benchmarks in ``cardroom.bench``."""

from __future__ import annotations

import argparse
import importlib
import pkgutil

from cardroom import bench


def _available() -> list[str]:
    return sorted(m.name for m in pkgutil.iter_modules(bench.__path__) if not m.name.startswith("_"))


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="run benchmarks next to the reference libraries (figures and ratios)")
    parser.add_argument(
        "names", nargs="*", help=f"benchmarks to run (default: all of {', '.join(_available()) or 'none yet'})"
    )
    parser.add_argument("--quick", action="store_true", help="smaller samples, for a smoke run")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    names = args.names or _available()
    unknown = [n for n in names if n not in _available()]
    if unknown:
        print(f"cardroom bench: unknown benchmark(s) {', '.join(unknown)}; available: {', '.join(_available())}")
        return 2
    for name in names:
        module = importlib.import_module(f"{bench.__name__}.{name}")
        print(f"== bench {name} ==", flush=True)
        module.run(args)
    return 0
