"""``cardroom bots``: bot players through the gateway (random legal actions), with progress."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

OPERATOR_ENV = "CARDROOM_OPERATOR_TOKEN"
OPERATOR_FILE = Path("var") / "gateway.operator-token"


def operator_token(given: str | None) -> str:
    """--operator-token, else $CARDROOM_OPERATOR_TOKEN, else var/gateway.operator-token, else ""."""
    if given:
        return given
    if os.environ.get(OPERATOR_ENV, "").strip():
        return os.environ[OPERATOR_ENV].strip()
    try:
        return OPERATOR_FILE.read_text().strip()
    except OSError:
        return ""


def stakes_arg(text: str) -> tuple[int, int]:
    """``LOW/HIGH`` (positive integers, LOW <= HIGH) -> (low, high)."""
    low, slash, high = text.partition("/")
    try:
        pair = (int(low), int(high))
    except ValueError:
        pair = (0, 0)
    if not slash or not 0 < pair[0] <= pair[1]:
        raise argparse.ArgumentTypeError(f"{text!r}: LOW/HIGH with 0 < LOW <= HIGH, e.g. 100/200")
    return pair


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "bots",
        help="bot players through the gateway: random legal actions, hands/s and latency",
        description="Create TABLES bot tables of GAME through the gateway's operator API (the operator token), "
        "log K bots per table in through the gateway, sit them down and play random legal actions; "
        "print progress. The bots talk to the gateway only.",
    )
    parser.add_argument(
        "--tournament",
        default=None,
        metavar="ID",
        help="register K bots (--players-per-table) in tournament ID and play it to the end at its tables "
        "(funded with --fund cents each through the operator API)",
    )
    parser.add_argument("--tables", type=int, default=1, help="number of tables (default 1)")
    parser.add_argument("--players-per-table", type=int, default=6, metavar="K", help="bots per table (default 6)")
    parser.add_argument(
        "--seats", type=int, default=0, help="seats per table (default: K; more leaves room for people)"
    )
    parser.add_argument("--game", default="NT", metavar="CODE", help="variant code: NT, PO/8, F7S, ... (default NT)")
    parser.add_argument("--hands", type=int, default=None, metavar="H", help="stop after H hands in all, then stand up")
    parser.add_argument(
        "--think-ms", type=float, default=0.0, metavar="T", help="think time per action, ms (default 0)"
    )
    parser.add_argument("--gateway", default="127.0.0.1:20055", help="gateway address")
    parser.add_argument(
        "--operator-token",
        default=None,
        metavar="TOKEN",
        help="the gateway's GATEWAY_OPERATOR_TOKEN, to create the tables and fund the bots "
        f"(default: ${OPERATOR_ENV}, else the file {OPERATOR_FILE} that `make run` writes)",
    )
    parser.add_argument("--currency", choices=("play", "cash"), default="play", help="table currency (default play)")
    parser.add_argument(
        "--fund",
        type=int,
        default=0,
        metavar="AMOUNT",
        help="deposit AMOUNT into each bot's account first (default 0: the gateway's play-money grant)",
    )
    parser.add_argument(
        "--stakes",
        type=stakes_arg,
        default=None,
        metavar="LOW/HIGH",
        help="the tables' stakes as named, in cents at cash tables: the blinds (NT 100/200 is $1/$2), the small "
        "and big bet of limit and stud games (default: the smallest, 1/2; cash pots that small take no rake)",
    )
    parser.add_argument("--prefix", default="bots", help="table id and player name prefix (default 'bots')")
    parser.add_argument("--hand-pause", type=float, default=0.2, help="seconds between hands (default 0.2)")
    parser.add_argument("--record", type=Path, default=None, help="append every Play event to this file")
    parser.add_argument("--seed", type=int, default=None, help="random seed of the bots' choices")
    parser.add_argument("--timeout", type=float, default=None, help="give up after this many seconds")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    import grpc

    from cardroom.client.bots import BotSettings, run_bots
    from cardroom.v1 import common_pb2

    if args.tournament:
        return run_tournament(args)
    if args.tables < 1 or not 2 <= args.players_per_table <= 10:
        print("cardroom bots: --tables must be >= 1 and --players-per-table 2..10")
        return 2
    token = operator_token(args.operator_token)
    if not token:
        print(
            f"cardroom bots: the gateway's operator token is needed to create the tables: --operator-token, "
            f"${OPERATOR_ENV} or {OPERATOR_FILE}"
        )
        return 2
    settings = BotSettings(
        gateway=args.gateway,
        operator_token=token,
        game=args.game,
        tables=args.tables,
        players_per_table=args.players_per_table,
        seats=args.seats,
        hands=args.hands,
        think_ms=args.think_ms,
        currency=common_pb2.CURRENCY_CASH if args.currency == "cash" else common_pb2.CURRENCY_PLAY,
        fund=args.fund,
        prefix=args.prefix,
        hand_pause=args.hand_pause,
        record=args.record,
        seed=args.seed,
        timeout=args.timeout,
        stakes=args.stakes,
    )
    try:
        runner = run_bots(settings)
    except (KeyboardInterrupt, asyncio.CancelledError):
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): end quietly
        from cardroom.client.pipe import quiet_stdout

        quiet_stdout()
        return 0
    except grpc.RpcError as err:
        from cardroom.client.words import error_words

        print(f"cardroom bots: {error_words(err)}")
        return 1
    except TimeoutError:
        print("cardroom bots: timed out")
        return 1
    return 130 if runner.interrupted else 0


def run_tournament(args: argparse.Namespace) -> int:
    """``cardroom bots --tournament ID``: K bots enter ID and play it to the end."""
    import asyncio

    import grpc

    from cardroom.client.tournament_bots import TournamentBots, TournamentBotSettings

    token = operator_token(args.operator_token)
    if args.fund > 0 and not token:
        print(
            "cardroom bots: --fund needs the gateway's operator token: "
            f"--operator-token, ${OPERATOR_ENV} or {OPERATOR_FILE}"
        )
        return 2
    settings = TournamentBotSettings(
        gateway=args.gateway,
        operator_token=token,
        tournament_id=args.tournament,
        players=args.players_per_table,
        prefix=args.prefix,
        fund=args.fund,
        think_ms=args.think_ms,
        seed=args.seed,
        timeout=args.timeout,
    )
    try:
        asyncio.run(TournamentBots(settings).run())
    except KeyboardInterrupt:
        return 130
    except grpc.RpcError as err:
        from cardroom.client.words import error_words

        print(f"cardroom bots: {error_words(err)}")
        return 1
    except TimeoutError:
        print("cardroom bots: timed out")
        return 1
    return 0
