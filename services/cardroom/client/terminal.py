"""The line-oriented terminal client behind ``cardroom play``: lobby, seat, table view, actions, and the
tournament lobby (:mod:`cardroom.client.tournaments`)."""

from __future__ import annotations

import asyncio
import sys
import threading
import time
from collections.abc import Callable
from typing import TextIO

import grpc

from cardroom.client import tournament_seat, tournaments
from cardroom.client.connection import GatewayClient, PlayStream
from cardroom.client.view import ACTION_NAMES, TableView
from cardroom.client.words import error_words, for_people
from cardroom.v1 import common_pb2, dealer_pb2 as d, gateway_pb2 as g, tournament_pb2 as tpb

CURRENCY = {common_pb2.CURRENCY_CASH: "cash", common_pb2.CURRENCY_PLAY: "play"}
BY_NAME = {name: action for action, name in ACTION_NAMES.items()} | {"bringin": d.ACTION_TYPE_BRING_IN}
HELP = (
    "commands: fold | check | call | bet N | raise N | complete N | bring-in | draw [CARDS...] | "
    "add N | post | table | sitout | back | balance | leave | help | "
    "cashier [deposit N | withdraw N] [cash|play] | cashier history | hands [N] | hands text [N] | " + tournaments.HELP
)
#: At the tournament lobby (``cardroom play --tournaments``): no table, so no actions.
LOBBY_HELP = f"commands: {tournaments.HELP} | balance | cashier ... | help | quit"
#: At a tournament table (``play ID``): the tournament seats and moves its players, so no buy-in,
#: no chips added and no standing up with them; ``leave`` stops following, the player stays in.
TOURNAMENT_HELP = (
    "commands: fold | check | call | bet N | raise N | complete N | bring-in | draw [CARDS...] | table | "
    "sitout | back | post | balance | hands [N] | help | leave (you stay in the tournament) | " + tournaments.HELP
)
#: How one leaves a tournament table, in words.
LEFT_WORDS = {
    "moved_out": "you are moved to another table (the tournament balances or breaks its tables)",
    "busted": "you have no chips left",
    "removed": "you were taken off the table by the tournament",
    "table_closed": "the table closed",
}
#: The reason of a Play stream another session of the same player took over (the gateway's).
SESSION_TAKEN_OVER = "SESSION_TAKEN_OVER"


def ordinal(n: int) -> str:
    """1st, 2nd, 3rd, 4th ... 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def describe_legal(legal: d.LegalActionsView) -> str:
    parts = []
    for action in legal.actions:
        name = ACTION_NAMES.get(action, "?")
        if action == d.ACTION_TYPE_CALL:
            parts.append(f"call {legal.call_amount}")
        elif action in (d.ACTION_TYPE_BET, d.ACTION_TYPE_RAISE, d.ACTION_TYPE_COMPLETE):
            parts.append(f"{name} {legal.min_to}" + (f"..{legal.max_to}" if legal.max_to > legal.min_to else ""))
        elif action == d.ACTION_TYPE_DRAW:
            parts.append(f"draw (up to {legal.max_discards} cards)")
        elif action == d.ACTION_TYPE_BRING_IN and legal.bring_in:
            parts.append(f"bring-in {legal.bring_in}")
        else:
            parts.append(name)
    return " | ".join(parts)


def parse_command(line: str) -> g.PlayAction | str:
    """A PlayAction, or a word (table, leave, ...), or an error message starting with '?'."""
    tournament = tournaments.parse(line)
    if tournament is not None:
        return tournament
    words = line.strip().lower().split()
    if not words:
        return "?"
    head, rest = words[0], words[1:]
    if head in ("table", "leave", "quit", "exit", "help", "sitout", "back", "balance", "post"):
        return head
    if head == "cashier":
        if not rest or rest == ["history"]:
            return "cashier " + " ".join(rest) if rest else "cashier"
        if (
            rest[0] in ("deposit", "withdraw")
            and len(rest) in (2, 3)
            and rest[1].isdigit()
            and (len(rest) == 2 or rest[2] in ("cash", "play"))
        ):
            return "cashier " + " ".join(rest)
        return (
            "? cashier: 'cashier', 'cashier deposit N [cash|play]', 'cashier withdraw N [cash|play]', 'cashier history'"
        )
    if head == "hands":
        if rest[:1] == ["text"]:
            rest = rest[1:]
            head = "hands text"
        if len(rest) > 1 or (rest and not rest[0].isdigit()):
            return "? hands: 'hands [N]' (your last N hands) or 'hands text [N]' (as PokerStars text)"
        return f"{head} {rest[0] if rest else 10}"
    if head == "add":
        if len(rest) != 1 or not rest[0].isdigit():
            return "? add needs one whole amount, e.g. 'add 100'"
        return f"add {rest[0]}"
    action = BY_NAME.get(head)
    if action is None:
        return f"? unknown command {head!r} ({HELP})"
    move = g.PlayAction(action=action)
    if action in (d.ACTION_TYPE_BET, d.ACTION_TYPE_RAISE, d.ACTION_TYPE_COMPLETE):
        if len(rest) != 1 or not rest[0].isdigit():
            return f"? {head} needs one whole amount (the total to bet to), e.g. '{head} 40'"
        move.amount = int(rest[0])
    elif action == d.ACTION_TYPE_DRAW:
        move.discards.extend(card[:-1].upper() + card[-1] for card in rest)
    return move


class Terminal:
    """Reads commands from ``stdin``, prints the table to ``stdout``."""

    def __init__(
        self, client: GatewayClient, out: TextIO = sys.stdout, readline: Callable[[], str] = sys.stdin.readline
    ) -> None:
        self.client = client
        self.out = out
        self.readline = readline
        self.me = ""
        self.cashier_requests = 0
        self.returning = 0  # chips still at the table after a leave, coming back when the hand ends
        self.tournaments = tournaments.TournamentCommands(client, self.say)
        self._lines: asyncio.Queue[str | None] | None = None
        """Input read ahead by a reader thread (from a tournament's first table on: lines typed
        while the client waits for a table or follows the player to another are kept)."""
        self._eof = False
        self._at: tuple[PlayStream, TableView, str] | None = None
        """The tournament table the player follows now (its stream, its view, its id)."""

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def ask(self, prompt: str = "") -> str | None:
        if prompt:
            self.say(prompt)
        if self._lines is not None:
            return await self._next_line()
        line = await asyncio.get_running_loop().run_in_executor(None, self.readline)
        return None if line == "" else line.strip()

    async def _next_line(self) -> str | None:
        """The next line read ahead; None at the end of the input (and after it)."""
        if self._eof or self._lines is None:
            return None
        line = await self._lines.get()
        self._eof = line is None
        return line

    def _read_ahead(self) -> asyncio.Queue[str | None]:
        """Start reading input in a daemon thread (it never holds up the end of the program)."""
        if self._lines is None:
            lines: asyncio.Queue[str | None] = asyncio.Queue()
            loop = asyncio.get_running_loop()

            def read() -> None:
                while True:
                    line = self.readline()
                    loop.call_soon_threadsafe(lines.put_nowait, None if line == "" else line.strip())
                    if line == "":
                        return

            threading.Thread(target=read, name="terminal-input", daemon=True).start()
            self._lines = lines
        return self._lines

    async def show_balance(self, currency: int = 0) -> None:
        reply = await self.client.balances()
        line = "balance: " + ", ".join(f"{CURRENCY.get(b.currency, '?')} {b.balance}" for b in reply.balances)
        if self.returning:
            line += f" (+ {self.returning} coming back from the table when the hand ends)"
        self.say(line)

    async def cashier(self, words: list[str]) -> None:
        """The cashier: balances with chips at tables, deposits / withdrawals, the history."""
        try:
            if not words:
                view = await self.client.cashier()
                for b in view.balances:
                    line = (
                        f"{CURRENCY.get(b.currency, '?')}: {b.wallet} in the wallet + {b.at_tables} at tables"
                        f" = {b.total}"
                    )
                    if b.daily_limit:
                        line += f"  (deposited today {b.deposited_today} of {b.daily_limit})"
                    self.say(line)
                for m in view.pending:
                    self.say(f"waiting for approval: {self._move_words(m)}")
            elif words[0] == "history":
                for e in (await self.client.cashier_history()).entries:
                    self.say(
                        f"{e.time.ToDatetime():%Y-%m-%d %H:%M}  {CURRENCY.get(e.currency, '?'):<4} {e.what:<12}"
                        f" {e.amount:+}  -> {e.balance_after}"
                    )
            else:
                currency = common_pb2.CURRENCY_CASH if words[2:] == ["cash"] else common_pb2.CURRENCY_PLAY
                self.cashier_requests += 1
                move = await self.client.cashier_move(
                    words[0] == "deposit",
                    currency,
                    int(words[1]),
                    f"{self.me}-{time.time_ns()}-{self.cashier_requests}",
                )
                self.say(self._move_words(move))
        except grpc.aio.AioRpcError as err:
            self.say(f"cashier: {error_words(err, self.me)}")

    async def hands(self, limit: int, text: bool) -> None:
        """The player's own recent hands: a line each, or the PokerStars text for tracking tools."""
        try:
            reply = await self.client.my_hands(limit, pokerstars=text)
        except grpc.aio.AioRpcError as err:
            self.say(f"hands: {error_words(err, self.me)}")
            return
        if not reply.hands:
            self.say("no hands yet (the card room keeps your last hands until it restarts)")
        elif text:
            self.say(reply.pokerstars.rstrip("\n"))
        else:
            for h in reply.hands:
                self.say(self.hand_line(h))

    @staticmethod
    def hand_line(h: d.RecentHand) -> str:
        """``#t1-7 NT  seat 2 [As Kd]  board Qh 7c 2d 9s 3h  won 40  (bob showed Jc Jd)``."""
        mine = next((s for s in h.seats if s.seat == h.seat), None)
        cards = " ".join(mine.cards) if mine is not None else ""
        result = f"won {h.net}" if h.net > 0 else (f"lost {-h.net}" if h.net < 0 else "even")
        line = f"#{h.hand_id} {h.variant}  seat {h.seat} [{cards}]"
        if h.board:
            line += f"  board {' '.join(h.board)}"
        line += f"  {result}"
        shown = [f"{s.player_id} showed {' '.join(s.cards)}" for s in h.seats if s.seat != h.seat and s.shown]
        if shown:
            line += f"  ({'; '.join(shown)})"
        return line

    @staticmethod
    def _move_words(m: g.CashierMove) -> str:
        what = "deposit" if m.kind == g.CashierMove.KIND_DEPOSIT else "withdrawal"
        status = {
            g.CashierMove.STATUS_DONE: f"done, balance {m.balance}",
            g.CashierMove.STATUS_PENDING: "waiting for the card room's approval",
            g.CashierMove.STATUS_REJECTED: f"rejected: {m.note}",
        }.get(m.status, "?")
        return f"{what} of {m.amount} {CURRENCY.get(m.currency, '?')}: {status}"

    async def pick_table(self, wanted: str | None) -> g.LobbyTable | None:
        tables = await self.client.lobby()
        if not tables:
            self.say("the lobby is empty: no open tables")
            return None
        self.say("lobby:")
        for i, t in enumerate(tables, 1):
            s = t.stakes
            stakes = f"{s.small_blind}/{s.big_blind}" if s.big_blind else f"{s.small_bet}/{s.big_bet}"
            self.say(
                f"  {i}. {t.table_id:<20} {t.variant:<6} {CURRENCY.get(t.currency, '?'):<5} stakes {stakes:<8}"
                f" seats {t.seats_taken}/{t.seats}  buy-in {t.min_buy_in}..{t.max_buy_in or 'no maximum'}"
                f"  hands {t.hands_dealt}"
            )
        self.say(f"(or a tournament command: {tournaments.HELP})")
        while True:
            choice = wanted or await self.ask("table (number or id)>")
            wanted = None
            if choice is None:
                return None
            tournament = tournaments.parse(choice)
            if tournament is not None and tournament.startswith("play "):
                await self.play_tournament(self.tournaments.tournament_id(tournament.split()[1]))
                self.say("table (number or id), or a tournament command")
                continue
            if tournament is not None:
                await self._tournament_command(tournament)
                continue
            for i, t in enumerate(tables, 1):
                if choice in (str(i), t.table_id):
                    return t
            self.say(f"no table {choice!r} in the lobby")

    async def _tournament_command(self, parsed: str) -> None:
        if parsed.startswith("?"):
            self.say(parsed[2:])
        else:
            await self.tournaments.run(parsed, self.me)

    async def tournament_lobby(self) -> int:
        """The tournament lobby without a table: list, show, register, unregister, status; ``quit`` ends."""
        await self.tournaments.run("tournaments", self.me)
        self.say(LOBBY_HELP)
        while True:
            line = await self.ask("tournaments>")
            if line is None:
                return 0
            parsed = parse_command(line)
            if not isinstance(parsed, str):  # an action
                self.say(f"not at a table here: {LOBBY_HELP}")
            elif parsed == "?":
                continue
            elif parsed.startswith("play "):
                await self.play_tournament(self.tournaments.tournament_id(parsed.split()[1]))
            elif parsed.startswith("?") or parsed.split()[0] in tournaments.VERBS:
                await self._tournament_command(parsed)
            elif parsed in ("quit", "exit", "leave"):
                return 0
            elif parsed == "balance":
                await self.show_balance()
            elif parsed.startswith("cashier"):
                await self.cashier(parsed.split()[1:])
            elif parsed == "help":
                self.say(LOBBY_HELP)
            else:
                self.say(f"not at a table here: {LOBBY_HELP}")

    async def run(
        self,
        player: str,
        table_id: str | None,
        buy_in: int | None,
        password: str = "",
        sign_up: bool = False,
        tournament_lobby: bool = False,
        tournament: str = "",
    ) -> int:
        """Log in (``password`` empty: the development login; ``sign_up``: make the account first), then
        a table (pick, sit, play) or, with ``tournament_lobby``, the tournament lobby; with
        ``tournament``, registered in it (when not yet), to its table once it starts, then the lobby."""
        if sign_up:
            login = await self.client.sign_up(player, password)
            self.say(f"signed up as {login.player_id}" + (" (play-money grant deposited)" if login.granted else ""))
        else:
            login = await self.client.login(player, password)
        self.me = login.player_id
        self.say(f"logged in as {login.player_id}")
        await self.show_balance()
        if tournament:
            await self.play_tournament(tournament, register=True)
            return await self.tournament_lobby()
        if tournament_lobby:
            return await self.tournament_lobby()
        table = await self.pick_table(table_id)
        if table is None:
            return 1
        amount = buy_in or table.max_buy_in or table.min_buy_in * 5
        try:
            joined = await self.client.join(table.table_id, amount)
            self.say(f"seated at seat {joined.seat.seat} with {joined.seat.stack}")
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.ALREADY_EXISTS:
                self.say(f"cannot sit down: {error_words(err, self.me)}")
                return 1
            self.say("already seated: rejoining")
        self.say(HELP)
        return await self.play(table.table_id, player)

    async def play(self, table_id: str, player: str) -> int:
        stream = self.client.play(table_id)
        view = TableView(me=player)
        events = asyncio.create_task(self.follow(stream, view))
        try:
            while not events.done():
                line = await self.ask()
                if line is None or not events.done() and await self.command(line, stream, view, table_id):
                    break
        finally:
            await self.leave(table_id)
            await stream.close()
            with_timeout = asyncio.wait_for(events, 15)
            try:
                await with_timeout
            except (TimeoutError, grpc.aio.AioRpcError):
                stream.cancel()
            await self.show_balance()
        return 0

    async def leave(self, table_id: str) -> None:
        try:
            reply = await self.client.leave(table_id)
            self.returning = reply.returning if reply.pending else 0
            self.say(
                f"left the table: {reply.cashed_out} back to the wallet"
                if not reply.pending
                else f"leaving after this hand: {reply.returning} chips come back to the wallet then"
            )
        except grpc.aio.AioRpcError as err:
            self.say(f"leave: {error_words(err, self.me)}")

    async def command(self, line: str, stream: PlayStream, view: TableView, table_id: str) -> bool:
        """Handle one input line; True to quit."""
        parsed = parse_command(line)
        if parsed == "?":
            return False
        if isinstance(parsed, str):
            if parsed.startswith("?"):
                self.say(parsed[2:])
            elif parsed in ("leave", "quit", "exit"):
                return True
            elif parsed == "table":
                self.say(view.render())
            elif parsed == "balance":
                await self.show_balance()
            elif parsed == "help":
                self.say(HELP)
            elif parsed.startswith("play "):
                self.say(
                    "you are at a cash table: 'leave' it first, then 'cardroom play --tournament ID' "
                    "(or 'play ID' at the tournament lobby, 'cardroom play --tournaments')"
                )
            elif await self._general(parsed):
                pass
            elif parsed.startswith("add "):
                await stream.send(
                    g.PlayRequest(
                        request_id="add",
                        seat=g.SeatCommand(kind=g.SeatCommand.KIND_ADD_CHIPS, amount=int(parsed.split()[1])),
                    )
                )
            elif parsed == "post":
                await stream.send(
                    g.PlayRequest(request_id="post", seat=g.SeatCommand(kind=g.SeatCommand.KIND_POST_NOW))
                )
            else:
                kind = g.SeatCommand.KIND_SIT_OUT if parsed == "sitout" else g.SeatCommand.KIND_COME_BACK
                await stream.send(g.PlayRequest(request_id=f"{parsed}-{time.time_ns()}", seat=g.SeatCommand(kind=kind)))
            return False
        parsed.hand_number = view.hand_number
        await stream.send(g.PlayRequest(act=parsed))
        return False

    async def _general(self, parsed: str) -> bool:
        """The commands that need no table (cashier, hands, the tournament lobby's); True when
        ``parsed`` was one of them."""
        if parsed.startswith("cashier"):
            await self.cashier(parsed.split()[1:])
        elif parsed.split()[0] in tournaments.VERBS:
            await self.tournaments.run(parsed, self.me)
        elif parsed.startswith("hands"):
            words = parsed.split()
            await self.hands(int(words[-1]), text=words[1] == "text")
        else:
            return False
        return True

    async def follow(self, stream: PlayStream, view: TableView, tournament: bool = False) -> str | None:
        """Print what happens; show the table and the legal actions on our turn. At a tournament
        table, ends when the player leaves it (:func:`cardroom.client.tournament_seat.leaves`: the
        reason), when the stream could not follow the table (``""``: look it up again) or when
        another session took over (``SESSION_TAKEN_OVER``)."""
        async for event in stream:
            kind = event.WhichOneof("kind")
            if kind == "error":
                if tournament and tournament_seat.stream_failed(event):
                    if event.error.reason == SESSION_TAKEN_OVER:
                        self.say(f"! {for_people(event.error.code, event.error.reason, event.error.message)}")
                        return SESSION_TAKEN_OVER
                    return ""
                self.say(f"! {for_people(event.error.code, event.error.reason, event.error.message, self.me)}")
                continue
            if kind == "result" and event.result.request_id == "add":
                self.say(
                    "the chips will be added before the next hand (chips are added between hands only)"
                    if event.result.queued
                    else "chips added"
                )
                continue
            if kind == "result" and event.result.request_id == "post":
                self.say("you post the big blind at the next hand")
                continue
            if kind != "table":
                continue
            view.last = ""
            view.apply(event.table)
            what = event.table.WhichOneof("event")
            if (
                what == "seat_changed"
                and event.table.seat_changed.seat.player_id == self.me
                and event.table.seat_changed.change in ("stood_up", "absent_stood_up")
            ):
                self.returning = 0  # the chips are back in the wallet
            if what == "snapshot":
                self.say(view.render())
                if (seat := view.my_seat()) is not None and seat.waiting_for_big_blind:
                    self.say("waiting for the big blind: type 'post' to post it now and play the next hand")
            elif what == "cards_dealt" and (seat := view.my_seat()) and event.table.cards_dealt.seat == seat.seat:
                self.say(f"your cards: {' '.join(seat.cards)}")
            elif what == "hand_finished":
                finished = event.table.hand_finished
                self.say(view.render())
                self.say(f"hand #{finished.hand_number} over")
                for line in view.results:
                    self.say(f"  {line}")
                seat = view.my_seat()
                net = next((r.amount for r in finished.results if seat is not None and r.seat == seat.seat), None)
                if net:
                    self.say(f"you {'won' if net > 0 else 'lost'} {abs(net)}")
                if finished.cancelled:
                    self.say("(the hand was cancelled: every chip went back)")
            elif view.last:
                self.say(view.last)
            # on our turn, also when the table is opened during it (its snapshot: shown just above)
            if (turn := view.turn_shown(event.table)) is not None:
                if what != "snapshot":
                    self.say(view.render())
                self.say(f"your turn: {describe_legal(turn)}")
            if tournament and (why := tournament_seat.leaves(event.table, self.me)):
                self.say(LEFT_WORDS.get(why, why))
                return why
            if what == "table_closed":
                self.say("the table closed")
                return None
        return "" if tournament else None

    # ------------------------------------------------------------------ at a tournament's tables
    async def play_tournament(self, tournament_id: str, register: bool = False) -> tpb.TournamentPlayerStatus | None:
        """``play ID``: the player's table in ``tournament_id`` once it runs (waiting for the start),
        played with the usual commands, followed when the tournament moves him to another table
        (:mod:`cardroom.client.tournament_seat`, as the bots), until he is out (his place) or the
        tournament is over; ``leave`` stops following (he stays in: dealt in, checked or folded when
        his time runs out). ``register``: registers him first when he is not yet. His last status."""
        try:
            status = await self.client.tournament_status(tournament_id)
        except grpc.aio.AioRpcError as err:
            if not register or err.code() != grpc.StatusCode.NOT_FOUND:
                self.say(f"play: {error_words(err, self.me)}")
                return None
            await self.tournaments.run(f"register {tournament_id}", self.me)
            try:
                status = await self.client.tournament_status(tournament_id)
            except grpc.aio.AioRpcError:
                return None  # the registration said why
        if tournament_seat.is_done(status):
            return await self._finished(status)
        self._read_ahead()
        tables = 0
        seated: tuple[int, int] | None = None
        shown: list[str] = []

        def waiting(s: tpb.TournamentPlayerStatus) -> None:
            what = "between two tables" if s.status == "active" else s.status.replace("_", " ")
            if shown[-1:] != [what]:
                shown.append(what)
                if s.status == "registered":
                    self.say(
                        f"{tournament_id}: registered, waiting for the start (your table opens then; "
                        "'leave' stops waiting, you stay registered)"
                    )
                elif s.status != "active":
                    self.say(f"{tournament_id}: {what}")

        async def play_at(s: tpb.TournamentPlayerStatus) -> bool | None:
            nonlocal tables, seated
            table_id = tournament_seat.table_id(s)
            if (s.table, s.seat) != seated:  # not the same seat looked up again (its table not open yet)
                seated = (s.table, s.seat)
                tables += 1
                self.say(
                    f"{tournament_id}: {'your table' if tables == 1 else 'your new table'} is #{s.table} "
                    f"({table_id}), seat {s.seat}, {s.chips} chips"
                )
                if tables == 1:
                    self.say(TOURNAMENT_HELP)
            stream = self.client.play(table_id)
            view = TableView(me=self.me)
            self._at = (stream, view, table_id)
            try:
                why = await self.follow(stream, view, tournament=True)
            except grpc.aio.AioRpcError as err:
                if err.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.NOT_FOUND):
                    raise
                why = ""  # the gateway or the dealer restarting, or the table not open yet: look again
            finally:
                self._at = None
                await stream.close()
                stream.cancel()
            if why == SESSION_TAKEN_OVER:
                return None
            if not why:
                await asyncio.sleep(0.5)
            return bool(why)

        async def status_of() -> tpb.TournamentPlayerStatus:
            while True:
                try:
                    return await self.client.tournament_status(tournament_id)
                except grpc.aio.AioRpcError as err:
                    if err.code() not in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                        raise
                    await asyncio.sleep(1)

        following = asyncio.create_task(tournament_seat.follow(status_of, play_at, waiting))
        try:
            while not following.done():
                line = asyncio.create_task(self._next_line())
                done, _ = await asyncio.wait({following, line}, return_when=asyncio.FIRST_COMPLETED)
                if line not in done:
                    line.cancel()
                    break
                if await self._tournament_line(line.result(), tournament_id):
                    following.cancel()
                    self.say(
                        f"you stay in {tournament_id}: at your table you are dealt in, and checked or folded "
                        f"when your time runs out; 'play {tournament_id}' takes you back"
                    )
                    return None
            last = await following
        except grpc.aio.AioRpcError as err:
            self.say(f"play: {error_words(err, self.me)}")
            return None
        finally:
            if not following.done():
                following.cancel()
        return await self._finished(last) if last is not None else None

    async def _tournament_line(self, line: str | None, tournament_id: str) -> bool:
        """One input line at a tournament table (or while waiting for it); True to stop following."""
        if line is None:
            return True
        parsed = parse_command(line)
        if parsed == "?":
            return False
        if isinstance(parsed, str):
            if parsed.startswith("?"):
                self.say(parsed[2:])
            elif parsed in ("leave", "quit", "exit"):
                return True
            elif parsed == "help":
                self.say(TOURNAMENT_HELP)
            elif parsed == "balance":
                await self.show_balance()
            elif parsed.startswith("play "):
                self.say(f"you are following {tournament_id}: 'leave' first")
            elif await self._general(parsed):
                pass
            elif self._at is None:
                self.say(f"not at your table in {tournament_id} yet")
            else:  # table, add, post, sitout, back: the table answers (no chips added at a tournament table)
                stream, view, table_id = self._at
                await self._send_safely(self.command(line, stream, view, table_id))
            return False
        if self._at is None:
            self.say(f"not at your table in {tournament_id} yet")
            return False
        stream, view, table_id = self._at
        await self._send_safely(self.command(line, stream, view, table_id))
        return False

    async def _send_safely(self, sending: object) -> None:
        """Send to a table the player may just have left (the stream closing): nothing to say then."""
        assert asyncio.iscoroutine(sending)
        try:
            await sending
        except (grpc.aio.AioRpcError, asyncio.InvalidStateError, RuntimeError):
            self.say("(the table was just left: not sent)")

    async def _finished(self, status: tpb.TournamentPlayerStatus) -> tpb.TournamentPlayerStatus:
        """Says where the player finished (his place comes once the hand that busted him is settled)."""
        for _ in range(20):
            if status.place:
                break
            await asyncio.sleep(0.5)
            status = await self.client.tournament_status(status.tournament_id)
        tid = status.tournament_id
        try:
            entrants = (await self.client.tournament(tid)).entrants
        except grpc.aio.AioRpcError:
            entrants = 0
        of = f" of {entrants}" if entrants else ""
        prize = f", prize {status.prize} to your cash account" if status.prize else ""
        if status.place == 1:
            self.say(f"you won {tid}: 1st{of}{prize}")
        elif status.place:
            self.say(f"you are out of {tid}: you finished {ordinal(status.place)}{of}{prize}")
        else:
            self.say(tournaments.status_line(status))
        return status
