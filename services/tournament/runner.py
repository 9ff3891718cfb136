"""One tournament in the service: the core's :class:`Tournament` behind an asyncio lock, every
command logged (:mod:`tournament.commands`), its events numbered and stored, the money they make
owed queued for the wallet, and the table commands carried out through the :class:`TablePort`.

Rebuilt after a restart by replaying the logged commands (the core is pure); a hand that was in
progress is then rolled back (``crash``: every stack as at its start, rules/000) and dealt again.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Sequence
from typing import Any

from cardroom.core.table import Table
from cardroom.core.tournament import Status, Tournament, TournamentConfig, events as ev
from cardroom.core.tournament.tournament import PlayerStatus
from cardroom.v1 import tournament_pb2 as pb
from tournament import commands, metrics
from tournament.dealer_tables import DealerTables
from tournament.inprocess import InProcessTables
from tournament.money import PoolBook
from tournament.store import MoneyOp, RequestRow, StoredEvent, TournamentStore
from tournament.tables import HandEnded, sync


class Runner:
    """A tournament actor (module docstring)."""

    def __init__(
        self,
        tournament_id: str,
        request: pb.CreateTournamentRequest,
        config: TournamentConfig,
        seed: int,
        created: float,
        store: TournamentStore,
        tables: InProcessTables,
        overlay_account: str,
    ) -> None:
        self.tournament_id = tournament_id
        self.request = request
        self.config = config
        self.seed = seed
        self.created = created
        self.store = store
        self.tables = tables
        self.t = Tournament(config, random.Random(seed))
        self.book = PoolBook(tournament_id, config, overlay_account)
        self.lock = asyncio.Lock()
        self.command_seq = 0
        self.event_seq = 0
        self.deals = 0
        self.hands_played = 0
        self.last_hand_end: dict[int, float] = {}
        self.last_finish: dict[int, tuple[int, dict[int, int]]] = {}
        """table -> (hand number, seat -> chips) of the core's last hand there, as it ended (before
        the eliminations and moves its end caused)."""
        self.pending_since: dict[str, float] = {}
        self.rolled_back_words: dict[int, int] = {}
        """table -> the dealer's sequence of the last rollback word applied there (from the stored
        ``roll_back`` commands too): the same word heard again after a restart is not applied twice."""
        self.watchers: set[asyncio.Queue[StoredEvent | None]] = set()
        self._commands: list[commands.Command] = []
        self._events: list[StoredEvent] = []
        self._money: list[MoneyOp] = []
        self._replaying = False
        self.results: list[ev.Result] = []

    # ------------------------------------------------------------------ commands
    def do(self, cmd: commands.Command) -> Any:
        """Apply one command (the core's errors propagate and nothing is logged)."""
        if cmd["op"] == "deal":
            cmd = {**cmd, "deck_seed": self.next_deck_seed()}
        table = self.t.tables.get(int(cmd["table"])) if cmd["op"] == "deal" else None
        result = commands.apply(self.t, cmd)
        if cmd["op"] == "deal":
            self.deals += 1
            self._dealt(cmd, result, table)
        self._word(cmd)
        self.command_seq += 1
        if not self._replaying:
            self._commands.append(cmd)
        self._collect(float(cmd.get("now", 0.0)))
        return result

    @property
    def on_the_dealer(self) -> bool:
        """The hands are played on the dealer's tables (the core replays each one's actions)."""
        return isinstance(self.tables, DealerTables)

    def _dealt(self, cmd: commands.Command, plan: Any, hand: Table | None) -> None:
        """On the dealer: the same hand dealt there, with the same deck, before anything the deal
        caused (a level by hands) reaches the table (the port keeps the order)."""
        if plan is None or hand is None or not isinstance(self.tables, DealerTables):
            return
        table = int(cmd["table"])
        deck = [str(c) for c in commands.deck_for(int(cmd["deck_seed"]))]
        # ``hand``: the core's table as it dealt (a hand all in on its blinds may end inside the
        # deal, and a shoot-out round with it: the table is gone from the tournament by now)
        # the hand's own stakes: a level the deal began is its (its SetTournamentLevel comes after
        # the deal); a level the deal ended (by hands) is the next hand's; a hand rolled back and
        # dealt again is at the level it was first dealt at, however many began since
        t = self.t
        level = next(
            (i + 1 for i in range(t.level_index, -1, -1) if t.structure.level(i).stakes(t.variant) == hand.stakes),
            t.level_index + 1,
        )
        self.tables.deal(self.tournament_id, table, hand.hand_number, deck, hand.stakes, level)

    def next_deck_seed(self) -> int:
        return (self.seed * 1_000_003 + self.deals * 7919 + 17) % (2**62)

    def _collect(self, now: float) -> None:
        for _, record in self.t.drain_hands():
            self.hands_played += 1
            if not self._replaying:
                metrics.HANDS.inc()
            self._hand_over(record, now)
        for event in self.t.drain_events():
            self.event_seq += 1
            fields = ev.event_record(event)
            stored = StoredEvent(
                self.tournament_id, self.event_seq, fields["type"], event.at, json.dumps(fields, sort_keys=True)
            )
            cancellation = self.t.cancellation if isinstance(event, ev.Cancelled) else None
            owed = self.book.owed(self.event_seq, event, cancellation)
            seated = self.tables.seated(self.tournament_id)
            chips = {p: self.t.chips(p) for p in seated} | {
                p: self.t.chips(p) for p in self.t.entrants if self.t.entrants[p].status is PlayerStatus.ACTIVE
            }
            sync(self.tables, self.tournament_id, event, self.t.level.stakes(self.t.variant), seated, chips)
            if isinstance(event, ev.Finished):
                self.results = list(event.results)
            if isinstance(event, ev.Finished | ev.Cancelled):
                self.tables.close_all(self.tournament_id)
            if not self._replaying:
                self._events.append(stored)
                self._money.extend(owed)

    def _hand_over(self, record: Any, now: float) -> None:
        """A hand ended at a table: the players who lost their chips leave their seats (unless the
        seat is kept for a re-buy decision)."""
        table = int(record.table_name.rsplit("-t", 1)[1])
        self.last_hand_end[table] = now
        self.last_finish[table] = (record.number, dict(record.finishing_stacks))
        seated = self.tables.seated(self.tournament_id)
        for seat, player in record.busted:
            e = self.t.entrants[player]
            if e.status is PlayerStatus.PENDING_REBUY:
                self.pending_since.setdefault(player, now)
                if seated.get(player) == (table, seat):
                    self.tables.kept_for_rebuy(self.tournament_id, table, seat)
            elif seated.get(player) == (table, seat):
                self.tables.remove_player(self.tournament_id, table, seat)
        self.tables.report(
            HandEnded(
                self.tournament_id,
                table,
                record.number,
                dict(record.starting_stacks),
                dict(record.finishing_stacks),
                tuple(s for s, _ in record.busted),
            )
        )

    def flush(self, requests: Sequence[tuple[str, RequestRow]] = ()) -> None:
        """Commit the step (commands, events, money, request rows) in one transaction, then tell
        the watchers."""
        if not (self._commands or self._events or self._money or requests):
            self._release()
            return
        first = self.command_seq - len(self._commands) + 1
        self.store.commit_step(
            self.tournament_id, first, self._commands, self._events, self._money, self.event_seq, requests
        )
        self._release()
        events, self._commands, self._events, self._money = self._events, [], [], []
        for event in events:
            for queue in list(self.watchers):
                queue.put_nowait(event)
        if self.t.status in (Status.FINISHED, Status.CANCELLED):
            for queue in list(self.watchers):
                queue.put_nowait(None)

    def _release(self) -> None:
        """On the dealer: the table commands of what is now stored go out."""
        if isinstance(self.tables, DealerTables):
            self.tables.release(self.tournament_id)

    def replay(self, logged: list[commands.Command]) -> None:
        """Rebuild from the store: the same commands give the same tournament."""
        self._replaying = True
        try:
            for cmd in logged:
                table = self.t.tables.get(int(cmd["table"])) if cmd["op"] == "deal" else None
                result = commands.apply(self.t, cmd)
                if cmd["op"] == "deal":
                    self.deals += 1
                    self._dealt(cmd, result, table)
                self._word(cmd)
                self.command_seq += 1
                self._collect(float(cmd.get("now", 0.0)))
        finally:
            self._replaying = False

    def _word(self, cmd: commands.Command) -> None:
        if cmd["op"] == "roll_back" and cmd.get("word"):
            self.rolled_back_words[int(cmd["table"])] = int(cmd["word"])

    def rollback_heard_already(self, hand: HandEnded) -> bool:
        """A rollback word this tournament applied already: read again from the topic after a restart
        of this service (its consumer commits after the step is stored; a kill in between re-reads
        it). Applied twice, it would roll back the hand dealt again since, which the dealer plays."""
        return bool(hand.sequence) and hand.sequence <= self.rolled_back_words.get(hand.table, 0)

    def roll_back_hands(self) -> None:
        """After a restart: hands in progress are rolled back, not cancelled (rules/000). On the
        dealer they are still being played there: their results come back from the topic."""
        if self.t.playing and not self.on_the_dealer:
            self.do({"op": "crash"})

    # ------------------------------------------------------------------ queries
    @property
    def finished(self) -> bool:
        return self.t.status in (Status.FINISHED, Status.CANCELLED)

    def pending_rebuys(self) -> list[str]:
        return [p for p, e in self.t.entrants.items() if e.status is PlayerStatus.PENDING_REBUY]


__all__ = ["Runner"]
