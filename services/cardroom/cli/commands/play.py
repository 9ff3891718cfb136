"""``cardroom play``: a terminal poker client through the gateway (plain lines in and out)."""

from __future__ import annotations

import argparse
import os

PROMPT = "\0prompt"
PASSWORD_ENV = "CARDROOM_PASSWORD"


def password_of(args: argparse.Namespace) -> str:
    """The password from the flag, the environment, or asked at the terminal (twice for a sign-up)."""
    import getpass

    if args.password not in (None, PROMPT):
        return str(args.password)
    if args.password is None and os.environ.get(PASSWORD_ENV):
        return os.environ[PASSWORD_ENV]
    if args.password is None and not args.signup:
        return ""  # the development login
    password = getpass.getpass(f"password for {args.player}: ")
    if args.signup and getpass.getpass("the same password again: ") != password:
        raise SystemExit("cardroom play: the two passwords differ")
    return password


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "play",
        help="play poker in the terminal through the gateway",
        description="Log in (--password; --signup makes the account), pick a table in the lobby, sit down and "
        "play. On your turn the table and the "
        "legal actions are printed; type e.g. 'call', 'raise 40', 'fold', 'draw 2c 7d'. "
        "'leave' (or end of input) stands up and quits. "
        "Tournaments (at the table, at the table prompt, or with --tournaments without a table): "
        "'tournaments' lists the tournament lobby (buy-in+fee, entrants, prize pool, blinds, start), "
        "'tournament ID' shows one, 'register ID' buys in from your cash account, 'unregister ID' gives "
        "it back (before the deadline), 'mystatus ID' is your own status, 'play ID' takes you to your "
        "table once it starts and follows you when the tournament moves you (busted or the winner: your "
        "place); ID is a tournament id or its number in the last list. --tournament ID registers you "
        "(when not yet) and plays it.",
    )
    parser.add_argument("--player", required=True, help="your player id (1-32 letters, digits, '_', '-')")
    parser.add_argument(
        "--password",
        nargs="?",
        const=PROMPT,
        default=None,
        help="log in with a password: asked for when given without a value (else $CARDROOM_PASSWORD); "
        "without --password (and no $CARDROOM_PASSWORD) the development login is used, which only a "
        "gateway started with GATEWAY_DEV_LOGIN=1 (make run) accepts",
    )
    parser.add_argument(
        "--signup", action="store_true", help="make the account first (a new player id and a password, 8-128 chars)"
    )
    parser.add_argument("--gateway", default="127.0.0.1:20055", help="gateway address (default 127.0.0.1:20055)")
    parser.add_argument("--table", default=None, help="table id or lobby number (default: ask)")
    parser.add_argument("--buy-in", type=int, default=None, help="buy-in (default: the table's maximum)")
    parser.add_argument(
        "--tournaments",
        action="store_true",
        help="the tournament lobby instead of a table: list, show, register, unregister, mystatus; 'quit' ends",
    )
    parser.add_argument(
        "--tournament",
        default="",
        metavar="ID",
        help="register in tournament ID (when not yet: the buy-in and fee from your cash account), wait for "
        "its start and play it at your table, followed from table to table; then the tournament lobby",
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import asyncio

    import grpc

    from cardroom.client.connection import GatewayClient
    from cardroom.client.terminal import Terminal

    password = password_of(args)

    async def main() -> int:
        client = GatewayClient(args.gateway)
        try:
            return await Terminal(client).run(
                args.player,
                args.table,
                args.buy_in,
                password,
                args.signup,
                tournament_lobby=args.tournaments,
                tournament=args.tournament,
            )
        finally:
            await client.close()

    try:
        return asyncio.run(main())
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # the reader went away (`| head`): end quietly
        from cardroom.client.pipe import quiet_stdout

        quiet_stdout()
        return 0
    except grpc.RpcError as err:
        from cardroom.client.words import error_words

        print(f"cardroom play: {error_words(err, args.player)}")
        return 1
