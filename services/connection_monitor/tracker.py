"""Who is connected: heartbeats in, state changes out. Pure logic; time is an input (seconds)."""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable
from dataclasses import dataclass, field


class State(enum.Enum):
    CONNECTED = 1
    DISCONNECTED = 2
    RECONNECTED = 3


@dataclass(slots=True)
class Presence:
    """One player's connection: current state, when it began, last heartbeat."""

    player_id: str
    state: State
    changed_at: float
    last_seen: float
    session_id: str = ""
    offline_seconds: float = 0.0

    @property
    def online(self) -> bool:
        return self.state is not State.DISCONNECTED


@dataclass(frozen=True, slots=True)
class Change:
    """A state change to publish (a copy of the presence right after it)."""

    player_id: str
    state: State
    at: float
    last_seen: float
    session_id: str
    offline_seconds: float


def _change(p: Presence) -> Change:
    return Change(p.player_id, p.state, p.changed_at, p.last_seen, p.session_id, p.offline_seconds)


@dataclass
class ConnectionTracker:
    """A player is CONNECTED on the first heartbeat, DISCONNECTED after ``silence`` seconds
    without one, RECONNECTED on the next heartbeat after that.

    ``forget_after``: a player DISCONNECTED for longer than this may be forgotten (infinite:
    never): the caller takes :meth:`forgettable`, keeps them elsewhere, then drops them
    (:meth:`forget`). Nothing here depends on such a record any more (the sweep only looks at players online);
    :meth:`restore` hands one back, so his next heartbeat is a RECONNECTED as if never forgotten."""

    silence: float
    forget_after: float = math.inf
    players: dict[str, Presence] = field(default_factory=dict)

    def heartbeat(self, player_id: str, now: float, session_id: str = "") -> Change | None:
        """Record a heartbeat; return the state change it causes, if any."""
        p = self.players.get(player_id)
        if p is None:
            p = Presence(player_id, State.CONNECTED, now, now, session_id)
            self.players[player_id] = p
            return _change(p)
        p.last_seen = max(p.last_seen, now)
        if session_id:
            p.session_id = session_id
        if p.online:
            return None
        p.offline_seconds = max(0.0, now - p.changed_at)
        p.state, p.changed_at = State.RECONNECTED, now
        return _change(p)

    def sweep(self, now: float) -> list[Change]:
        """Mark every player silent for more than ``silence`` seconds disconnected."""
        changes = []
        for p in self.players.values():
            if p.online and now - p.last_seen > self.silence:
                p.state, p.changed_at, p.offline_seconds = State.DISCONNECTED, now, 0.0
                changes.append(_change(p))
        return changes

    def forgettable(self, now: float) -> list[Presence]:
        """The players DISCONNECTED for more than ``forget_after`` seconds."""
        return [p for p in self.players.values() if not p.online and now - p.changed_at > self.forget_after]

    def forget(self, presences: Iterable[Presence]) -> None:
        """Drop these records (one a heartbeat replaced since is kept)."""
        for p in presences:
            if self.players.get(p.player_id) is p and not p.online:
                del self.players[p.player_id]

    def restore(self, presence: Presence) -> None:
        """Take back a forgotten player's record (unless he is known again already)."""
        self.players.setdefault(presence.player_id, presence)

    def connected_count(self) -> int:
        return sum(1 for p in self.players.values() if p.online)
