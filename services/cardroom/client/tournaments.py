"""The tournament commands of ``cardroom play``: the tournament lobby, one tournament's page,
register, unregister and the player's own status, through the gateway, in lines for a person.

A tournament is named by its id or by its number in the last ``tournaments`` list. Amounts are in
the cash account's minor units (cents), as the cashier shows them; chips are tournament chips."""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable
from typing import Protocol

import grpc

from cardroom.client.words import error_words
from cardroom.v1 import gateway_pb2 as g, tournament_pb2 as t

VERBS = ("tournaments", "tournament", "register", "unregister", "mystatus", "play")
HELP = (
    "tournaments [registration|running|finished|cancelled] | tournaments more (the next page) | "
    "tournament ID | register ID | unregister ID | "
    "mystatus ID | play ID (to your table: waits for the start, follows you when you are moved)  "
    "(ID: a tournament id or its number in the last list)"
)
STATUS_NAMES: dict[int, str] = {
    t.TOURNAMENT_STATUS_REGISTRATION: "registration",
    t.TOURNAMENT_STATUS_RUNNING: "running",
    t.TOURNAMENT_STATUS_FINISHED: "finished",
    t.TOURNAMENT_STATUS_CANCELLED: "cancelled",
}
STATUS_BY_NAME = {name: status for status, name in STATUS_NAMES.items()}
#: ``tournaments more``: the next page of the last list (the tournaments over come 100 a page).
MORE = "more"
FORMAT_NAMES: dict[int, str] = {
    t.TOURNAMENT_FORMAT_UNSPECIFIED: "MTT",
    t.TOURNAMENT_FORMAT_MTT: "MTT",
    t.TOURNAMENT_FORMAT_SNG: "Sit & Go",
    t.TOURNAMENT_FORMAT_REBUY: "re-buy",
    t.TOURNAMENT_FORMAT_SATELLITE: "satellite",
    t.TOURNAMENT_FORMAT_FREEROLL: "freeroll",
    t.TOURNAMENT_FORMAT_HEADS_UP: "heads-up",
    t.TOURNAMENT_FORMAT_SHOOTOUT: "shoot-out",
}


def parse(line: str) -> str | None:
    """A tournament command as one normalised line (``"register Sng-1"``: the id keeps its case), an
    error for the player starting with ``"?"``, or None when ``line`` is no tournament command."""
    words = line.split()
    if not words or words[0].lower() not in VERBS:
        return None
    head, rest = words[0].lower(), words[1:]
    if head == "tournaments":
        if not rest:
            return head
        if len(rest) == 1 and (rest[0].lower() in STATUS_BY_NAME or rest[0].lower() == MORE):
            return f"{head} {rest[0].lower()}"
        return (
            "? tournaments: 'tournaments', 'tournaments registration|running|finished|cancelled' or "
            "'tournaments more' (the next page of the last list)"
        )
    if len(rest) != 1:
        return f"? {head} needs one tournament (its id or its number in the list), e.g. '{head} 1'"
    return f"{head} {rest[0]}"


def blinds(level: t.TournamentLevel) -> str:
    """``"50/100 ante 10"`` (blinds), ``"20/40 bring-in 5"`` (bets), or "" when the level has none."""
    if level.big_blind:
        return f"{level.small_blind}/{level.big_blind}" + (f" ante {level.ante}" if level.ante else "")
    if level.big_bet:
        return f"{level.small_bet}/{level.big_bet}" + (f" bring-in {level.bring_in}" if level.bring_in else "")
    return ""


def _start(line: g.LobbyTournament) -> str:
    if line.HasField("starts_at"):
        return f"starts {line.starts_at.ToDatetime(tzinfo=dt.UTC):%Y-%m-%d %H:%M} UTC"
    return f"Sit & Go: starts with {line.sit_and_go_size}" if line.sit_and_go_size else "Sit & Go"


def lobby_line(number: int, line: g.LobbyTournament) -> str:
    """``  1. sng-1  PO  Sit & Go  registration  buy-in 1000+100  entrants 2/6  pool 2000  blinds 10/20 ...``."""
    entrants = f"{line.entrants}/{line.max_entrants}" if line.max_entrants else str(line.entrants)
    level = f"level {line.level} " if line.level else ""
    text = (
        f"  {number}. {line.tournament_id:<20} {line.variant:<5} {FORMAT_NAMES.get(line.format, '?'):<9}"
        f" {STATUS_NAMES.get(line.status, '?'):<12} buy-in {line.buy_in}+{line.fee}  entrants {entrants}"
        f"  pool {line.prize_pool}"
    )
    if line.guarantee:
        text += f" (guaranteed {line.guarantee})"
    if blinds(line.blinds):
        text += f"  {level}blinds {blinds(line.blinds)}"
    if line.status == t.TOURNAMENT_STATUS_REGISTRATION:
        text += f"  {_start(line)}"
    elif line.status == t.TOURNAMENT_STATUS_RUNNING:
        text += f"  {line.remaining} left" + ("  on a break" if line.on_break else "")
    return text


def page_lines(info: t.TournamentInfo) -> list[str]:
    """One tournament's page: what it costs, who is in, what it pays, where it stands."""
    status, fmt = STATUS_NAMES.get(info.status, "?"), FORMAT_NAMES.get(info.format, "?")
    lines = [
        f"{info.tournament_id}: {info.name or info.tournament_id} ({info.variant}, {fmt})  {status}",
        f"  buy-in {info.buy_in} + fee {info.fee}, starting stack {info.starting_stack} chips",
    ]
    entrants = f"{info.entrants}/{info.max_entrants}" if info.max_entrants else str(info.entrants)
    lines.append(f"  entrants {entrants}, {info.remaining} left" if info.level else f"  entrants {entrants}")
    if info.starts_at > 0 and info.status == t.TOURNAMENT_STATUS_REGISTRATION:
        start = dt.datetime.fromtimestamp(info.starts_at, dt.UTC)
        lines.append(f"  starts {start:%Y-%m-%d %H:%M:%S} UTC")
    elif info.status == t.TOURNAMENT_STATUS_REGISTRATION:
        lines.append(f"  a Sit & Go: starts with {info.max_entrants} players" if info.max_entrants else "  Sit & Go")
    pool = f"  prize pool {info.prize_pool}" + (f" (guaranteed {info.guarantee})" if info.guarantee else "")
    if info.payouts:
        pool += "; pays " + ", ".join(f"{place}. {amount}" for place, amount in enumerate(info.payouts, 1))
        pool += "" if info.prize_pool_final else " (so far)"
    lines.append(pool)
    if info.level:
        clock = f"  level {info.level}: {blinds(info.blinds)}"
        clock += "  (on a break)" if info.on_break else f"  next level in {info.seconds_to_next_level:.0f} s"
        if info.hand_for_hand:
            clock += "  hand for hand"
        lines.append(clock)
    elif blinds(info.blinds):
        lines.append(f"  first level: {blinds(info.blinds)}")
    if info.tables:
        lines.append("  tables: " + ", ".join(f"#{x.table} ({x.players})" for x in info.tables))
    if info.chip_leader:
        lines.append(f"  chip leader: {info.chip_leader}")
    for s in info.standings[:10]:
        lines.append(f"    {s.player_id:<20} {s.chips} chips")
    for r in info.results:
        place = str(r.place) if r.last_place in (0, r.place) else f"{r.place}-{r.last_place}"
        lines.append(f"    {place:>5}. {r.player_id:<20} {r.prize}" + ("  (a seat)" if r.seat_won else ""))
    if info.cancellation_policy:
        lines.append(f"  cancelled ({info.cancellation_policy.replace('_', ' ')})")
    return lines


def status_line(s: t.TournamentPlayerStatus) -> str:
    """``"sng-1: active, table 1 seat 3, 1500 chips"``; ``place`` and ``prize`` once out."""
    text = f"{s.tournament_id}: {s.status.replace('_', ' ')}"
    if s.table:
        text += f", table {s.table} seat {s.seat}"
    if s.chips:
        text += f", {s.chips} chips"
    if s.place:
        text += f", finished {s.place}" + (f", won {s.prize}" if s.prize else "")
    if s.rebuys or s.add_ons:
        text += f" ({s.rebuys} re-buys, {s.add_ons} add-ons)"
    return text


class Client(Protocol):
    """What the commands need of :class:`cardroom.client.connection.GatewayClient`."""

    async def tournament_lobby(self, status: int = 0, page_token: str = "") -> g.TournamentLobbyResponse: ...
    async def tournament(self, tournament_id: str) -> t.TournamentInfo: ...
    async def register_tournament(self, tournament_id: str, request_id: str) -> t.TournamentEntryResponse: ...
    async def unregister_tournament(self, tournament_id: str, request_id: str) -> t.TournamentEntryResponse: ...
    async def tournament_status(self, tournament_id: str) -> t.TournamentPlayerStatus: ...


class TournamentCommands:
    """Runs the parsed commands (:func:`parse`) and says what happened."""

    def __init__(self, client: Client, say: Callable[[str], None]) -> None:
        self.client = client
        self.say = say
        self.listed: list[str] = []
        """The ids of the last list, by number (its pages so far)."""
        self.more: tuple[int, str] | None = None
        """The last list's status and the token of its next page (None: no page left)."""
        self.requests = 0

    def tournament_id(self, name: str) -> str:
        """The tournament ``name`` stands for: an id, or a number in the last list."""
        return self._tournament(name)

    def _tournament(self, name: str) -> str:
        if name.isdigit() and 1 <= int(name) <= len(self.listed):
            return self.listed[int(name) - 1]
        return name

    def _request_id(self, me: str) -> str:
        self.requests += 1
        return f"{me}-{time.time_ns()}-{self.requests}"

    async def run(self, command: str, me: str) -> None:
        head, _, rest = command.partition(" ")
        try:
            if head == "tournaments" and rest == MORE:
                await self.show_more()
                return
            if head == "tournaments":
                await self.show_lobby(STATUS_BY_NAME.get(rest, 0))
                return
            tournament_id = self._tournament(rest)
            if head == "tournament":
                for line in page_lines(await self.client.tournament(tournament_id)):
                    self.say(line)
            elif head == "register":
                entry = await self.client.register_tournament(tournament_id, self._request_id(me))
                self.say(
                    f"registered in {entry.tournament_id}: {entry.paid} (buy-in and fee) from your cash account"
                    + (" (already done)" if entry.replayed else "")
                )
                self.say(f"'play {entry.tournament_id}' takes you to your table (it waits for the start)")
            elif head == "unregister":
                entry = await self.client.unregister_tournament(tournament_id, self._request_id(me))
                self.say(f"unregistered from {entry.tournament_id}: {entry.paid} back to your cash account")
            elif head == "mystatus":
                self.say(status_line(await self.client.tournament_status(tournament_id)))
        except grpc.aio.AioRpcError as err:
            self.say(f"{head}: {error_words(err, me)}")

    async def show_lobby(self, status: int = 0) -> None:
        """A new list: its first page, numbered from 1."""
        reply = await self.client.tournament_lobby(status)
        self.listed = []
        if not reply.tournaments:
            self.more = None
            self.say("no tournaments" + (f" ({STATUS_NAMES[status]})" if status else ""))
            return
        self.say("tournaments:")
        self._show_page(status, reply)

    async def show_more(self) -> None:
        """The last list's next page, numbered on from where the page before ended."""
        if self.more is None:
            self.say("no more tournaments: 'tournaments' (or with a status) lists them again")
            return
        status, token = self.more
        self._show_page(status, await self.client.tournament_lobby(status, token))

    def _show_page(self, status: int, reply: g.TournamentLobbyResponse) -> None:
        for line in reply.tournaments:
            self.listed.append(line.tournament_id)
            self.say(lobby_line(len(self.listed), line))
        self.more = (status, reply.next_page_token) if reply.next_page_token else None
        if self.more is not None:
            self.say("  ... more: 'tournaments more'")


__all__ = ["HELP", "MORE", "VERBS", "TournamentCommands", "lobby_line", "page_lines", "parse", "status_line"]
