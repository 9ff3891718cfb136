"""``cardroom demo-sng``: keep a free demo Sit & Go open that bots fill and people can join
(:mod:`cardroom.client.demo_sng`; ``make run`` starts it)."""

from __future__ import annotations

import argparse
import os


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "demo-sng",
        help="keep a free demo Sit & Go open: bots take all seats but one, the last after a wait",
        description="Create a free NL Hold'em Sit & Go (buy-in 0, fee 0) on the tournament service (an operator call), "
        "register SEATS-1 bots at once and one more after --last-seat-after seconds unless a person took the "
        "seat (cardroom play --tournament ID); when it is over, open the next. The bots play through the "
        "gateway on the dealer's tables (the tournament service's TOURNAMENT_TABLES=dealer).",
    )
    parser.add_argument("--gateway", default="127.0.0.1:20055", help="gateway address (the bots play through it)")
    parser.add_argument("--tournament", default="127.0.0.1:20056", help="the tournament service's address")
    parser.add_argument(
        "--tls-dir",
        default="",
        metavar="DIR",
        help="the operator's certificate for mutual TLS (make run: var/pki/operator); default: plaintext",
    )
    parser.add_argument(
        "--operator-token",
        default=None,
        help="the tournament service's TOURNAMENT_OPERATOR_TOKEN, if it has one (default: $TOURNAMENT_OPERATOR_TOKEN)",
    )
    parser.add_argument("--seats", type=int, default=6, help="players per Sit & Go (default 6)")
    parser.add_argument(
        "--last-seat-after",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="a bot takes the last seat after this many seconds unless a person took it (default 60)",
    )
    parser.add_argument("--level-seconds", type=int, default=180, help="length of a blind level (default 180)")
    parser.add_argument("--action-seconds", type=int, default=20, help="time per decision (default 20)")
    parser.add_argument("--think-ms", type=float, default=1500, help="the bots' think time per action (default 1500)")
    parser.add_argument("--prefix", default="demo-sng", help="tournament id prefix (default demo-sng)")
    parser.add_argument("--rounds", type=int, default=None, help="stop after this many Sit & Gos (default: never)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    import grpc

    from cardroom.client.demo_sng import DemoSettings, DemoSitAndGo

    if not 2 <= args.seats <= 10:
        print("cardroom demo-sng: --seats must be 2..10")
        return 2
    settings = DemoSettings(
        gateway=args.gateway,
        tournament=args.tournament,
        tls_dir=args.tls_dir,
        operator_token=args.operator_token or os.environ.get("TOURNAMENT_OPERATOR_TOKEN", ""),
        seats=args.seats,
        last_seat_after=args.last_seat_after,
        level_seconds=args.level_seconds,
        action_seconds=args.action_seconds,
        think_ms=args.think_ms,
        prefix=args.prefix,
        rounds=args.rounds,
    )

    async def main() -> None:
        await DemoSitAndGo(settings).run()

    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        return 130
    except grpc.RpcError as err:
        from cardroom.client.words import error_words

        print(f"cardroom demo-sng: {error_words(err)}", flush=True)
        return 1
    return 0
