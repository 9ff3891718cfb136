"""The in-process :class:`~tournament.tables.TablePort`: the tournament's tables are the core's
own :class:`cardroom.core.table.Table` objects inside its :class:`Tournament`, and hands are
dealt and played here — by the auto policy (:mod:`tournament.bots`) for every seat.

It keeps the tables' side of the contract as the dealer will (a mirror of who sits where,
paused tables) and refuses a command that breaks it — a player seated twice, a move from an
empty seat, a seat taken — so the service's tests check the contract the dealer implements next.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cardroom.core.engine import Stakes
from tournament.tables import HandEnded


class ContractBroken(AssertionError):
    """A table command the tables' contract does not allow (a bug in the tournament service)."""


@dataclass
class MirrorTable:
    seats: dict[int, str] = field(default_factory=dict)
    stakes: Stakes | None = None
    paused: set[str] = field(default_factory=set)
    closed: bool = False


class InProcessTables:
    """The tables of every tournament in this process (``(tournament, table)`` -> mirror)."""

    def __init__(self) -> None:
        self.tables: dict[tuple[str, int], MirrorTable] = {}
        self.commands = 0
        self._ended: list[HandEnded] = []

    def _table(self, tid: str, table: int) -> MirrorTable:
        mirror = self.tables.get((tid, table))
        if mirror is None or mirror.closed:
            raise ContractBroken(f"{tid}: no open table {table}")
        return mirror

    def _where(self, tid: str, player: str) -> tuple[int, int] | None:
        for (t, number), mirror in self.tables.items():
            if t == tid and not mirror.closed:
                for seat, p in mirror.seats.items():
                    if p == player:
                        return number, seat
        return None

    def _sit(self, tid: str, table: int, seat: int, player: str) -> None:
        mirror = self._table(tid, table)
        if seat in mirror.seats:
            raise ContractBroken(f"{tid}: table {table} seat {seat} is taken by {mirror.seats[seat]}")
        if self._where(tid, player) is not None:
            raise ContractBroken(f"{tid}: {player} would be seated twice")
        mirror.seats[seat] = player

    def open_table(
        self,
        tournament_id: str,
        table: int,
        seats: dict[int, tuple[str, int]],
        stakes: Stakes,
        seat_count: int = 0,
        time_banks: dict[int, float] | None = None,
    ) -> None:
        self.commands += 1
        if (tournament_id, table) in self.tables:
            raise ContractBroken(f"{tournament_id}: table {table} opened twice")
        self.tables[(tournament_id, table)] = MirrorTable(stakes=stakes)
        for seat, (player, _) in sorted(seats.items()):
            self._sit(tournament_id, table, seat, player)

    def set_level(self, tournament_id: str, table: int, stakes: Stakes) -> None:
        self.commands += 1
        self._table(tournament_id, table).stakes = stakes

    def seat_player(self, tournament_id: str, table: int, seat: int, player: str, chips: int) -> None:
        self.commands += 1
        mirror = self._table(tournament_id, table)
        if mirror.seats.get(seat) == player:  # a re-buy after a bust: the seat was kept for him
            return
        self._sit(tournament_id, table, seat, player)

    def move_player(
        self, tournament_id: str, from_table: int, from_seat: int, to_table: int, to_seat: int, reason: str
    ) -> None:
        self.commands += 1
        source = self._table(tournament_id, from_table)
        player = source.seats.get(from_seat)
        if player is None:
            raise ContractBroken(f"{tournament_id}: no player at table {from_table} seat {from_seat} to move")
        target = self._table(tournament_id, to_table)
        if to_seat in target.seats:
            raise ContractBroken(
                f"{tournament_id}: table {to_table} seat {to_seat} is taken by {target.seats[to_seat]}"
            )
        del source.seats[from_seat]  # checked first: a refused move changes nothing
        target.seats[to_seat] = player

    def remove_player(self, tournament_id: str, table: int, seat: int) -> None:
        self.commands += 1
        if self._table(tournament_id, table).seats.pop(seat, None) is None:
            raise ContractBroken(f"{tournament_id}: no player at table {table} seat {seat} to remove")

    def kept_for_rebuy(self, tournament_id: str, table: int, seat: int) -> None:
        """The player at ``seat`` busted and may re-buy: the tournament keeps his seat (the mirror
        still has him there); the table stood him up at the end of the hand."""
        if seat not in self._table(tournament_id, table).seats:
            raise ContractBroken(f"{tournament_id}: no player at table {table} seat {seat} to keep")

    def add_chips(self, tournament_id: str, table: int, seat: int, chips: int) -> None:
        self.commands += 1
        if seat not in self._table(tournament_id, table).seats:
            raise ContractBroken(f"{tournament_id}: chips for the empty seat {seat} of table {table}")

    def pause(self, tournament_id: str, table: int, reason: str) -> None:
        self.commands += 1
        self._table(tournament_id, table).paused.add(reason)

    def resume(self, tournament_id: str, table: int, reason: str) -> None:
        self.commands += 1
        self._table(tournament_id, table).paused.discard(reason)

    def close_table(self, tournament_id: str, table: int) -> None:
        self.commands += 1
        mirror = self._table(tournament_id, table)
        mirror.seats.clear()
        mirror.closed = True

    def close_all(self, tournament_id: str) -> None:
        for (tid, _), mirror in self.tables.items():
            if tid == tournament_id:
                mirror.seats.clear()
                mirror.closed = True

    def settled(self, tournament_id: str) -> bool:
        """Nothing of ``tournament_id`` is still on its way to its tables (in-process: never)."""
        return True

    def forget(self, tournament_id: str) -> None:
        """``tournament_id`` is over and left the house: its tables' mirrors go."""
        for key in [k for k in self.tables if k[0] == tournament_id]:
            del self.tables[key]

    def report(self, hand: HandEnded) -> None:
        self._ended.append(hand)

    def hands_ended(self) -> list[HandEnded]:
        out, self._ended = self._ended, []
        return out

    def seated(self, tournament_id: str) -> dict[str, tuple[int, int]]:
        """player -> (table, seat) on the open tables of ``tournament_id``."""
        out: dict[str, tuple[int, int]] = {}
        for (tid, number), mirror in self.tables.items():
            if tid == tournament_id and not mirror.closed:
                for seat, player in mirror.seats.items():
                    if player in out:
                        raise ContractBroken(f"{tournament_id}: {player} seated twice")
                    out[player] = (number, seat)
        return out


__all__ = ["ContractBroken", "InProcessTables", "MirrorTable"]
