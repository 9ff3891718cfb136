"""``cardroom history export``: hand histories for players' tracking tools.

``cardroom history export --format pokerstars|phh FILE... [--hero PLAYER] [--unit N]
[--currency USD] [--out FILE]`` reads PHH files (``.phh``, or ``.phhs`` with several hands as
TOML tables); ``--topic cardroom.hand.records --bootstrap HOST:PORT [--table ID]`` reads the
dealer's hand records (``HandRecordPublished``, PHH text) from Kafka instead, from the start
of the topic to its end at the time of the call. It replays each hand and writes it as
PokerStars text (:mod:`cardroom.core.history.pokerstars`; hands separated by two blank lines)
or as PHH (:func:`cardroom.core.phh.dumps_fields`, the one PHH writer). ``--hero``: only that
player's own hole cards (others' where shown at the showdown). ``--unit``: chips per currency
unit (100 for cents: amounts as ``$1.50``). A hand that cannot be replayed is reported on stderr
with its file and action index (``PHHError``) and makes the exit status 1; the others are still
written.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from pathlib import Path
from typing import Any

from cardroom.core import phh
from cardroom.core.history import Format, hand_text


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("history", help="hand histories (PokerStars text, PHH)")
    sub = parser.add_subparsers(dest="history_command", metavar="SUBCOMMAND")
    export = sub.add_parser("export", help="export PHH hands as PokerStars text or PHH")
    export.add_argument("files", nargs="*", metavar="FILE", help="PHH files (.phh / .phhs)")
    export.add_argument("--topic", help="read the dealer's hand records from this Kafka topic")
    export.add_argument("--bootstrap", default="127.0.0.1:9092", help="Kafka bootstrap servers (with --topic)")
    export.add_argument("--table", help="with --topic: only this table's hands")
    export.add_argument("--format", choices=("pokerstars", "phh"), default="pokerstars")
    export.add_argument("--hero", help="only this player's hole cards (and cards shown at the showdown)")
    export.add_argument("--unit", type=int, default=1, help="chips per currency unit (100: cents)")
    export.add_argument("--currency", default="", help="currency code in the header, e.g. USD")
    export.add_argument("--out", metavar="FILE", help="write here instead of stdout")
    export.set_defaults(func=run)
    parser.set_defaults(func=lambda args: (parser.print_help(), 2)[1])


def _hands(fields: dict[str, Any]) -> list[tuple[str | None, dict[str, Any]]]:
    if "actions" in fields:
        return [(None, fields)]
    return [(name, table) for name, table in fields.items() if isinstance(table, dict)]


def topic_records(bootstrap: str, topic: str, table: str | None = None, timeout: float = 30.0) -> list[tuple[str, str]]:
    """(source name, PHH text) of every hand record in ``topic`` up to its current end."""
    from cardroom.runtime.consumer import read_to_end
    from cardroom.runtime.events import decode_envelope
    from cardroom.v1 import dealer_pb2

    out: list[tuple[str, str]] = []
    for record in read_to_end(bootstrap, topic, client_id="cardroom-history-export", timeout=timeout):
        message = dealer_pb2.HandRecordPublished()
        if record.value is None or not decode_envelope(record.value).payload.Unpack(message):
            continue
        if table is None or message.table_id == table:
            out.append((f"{topic}/{message.table_id}/{message.hand_id}", message.phh))
    return out


def run(args: argparse.Namespace) -> int:
    if args.unit <= 0:
        print("--unit must be positive", file=sys.stderr)
        return 2
    if not args.files and not args.topic:
        print("give PHH files or --topic", file=sys.stderr)
        return 2
    fmt = Format(unit=args.unit, symbol="$" if args.unit > 1 else "", currency=args.currency, hero=args.hero)
    status = 0
    out: list[str] = []
    sources: list[tuple[str, str | None]] = [(path, None) for path in args.files]
    if args.topic:
        try:
            sources += [(name, text) for name, text in topic_records(args.bootstrap, args.topic, args.table)]
        except Exception as exc:  # noqa: BLE001 - the broker's errors, reported plainly
            print(f"{args.topic}: {type(exc).__name__}: {exc}", file=sys.stderr)
            return 1
    for path, text in sources:
        try:
            fields = tomllib.loads(Path(path).read_text() if text is None else text)
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            print(f"{path}: {exc}", file=sys.stderr)
            status = 1
            continue
        for name, table in _hands(fields):
            source = path if name is None else f"{path}[{name}]"
            try:
                replay = phh.replay_fields(table, source=source)
            except phh.PHHError as exc:
                print(str(exc), file=sys.stderr)
                status = 1
                continue
            if args.format == "phh":
                out.append(phh.dumps_fields({k: v for k, v in table.items() if not isinstance(v, dict)}))
            else:
                out.append(hand_text(replay.hand, fmt, table))
    text = ("\n\n\n".join(out) + "\n") if args.format == "pokerstars" and out else "\n".join(out)
    if args.out:
        Path(args.out).write_text(text)
    else:
        sys.stdout.write(text)
    return status
