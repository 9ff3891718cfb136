"""Who is connected: heartbeats in, state changes out. Pure logic; time is an input (seconds)."""

from __future__ import annotations

import enum
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
    without one, RECONNECTED on the next heartbeat after that."""

    silence: float
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

    def connected_count(self) -> int:
        return sum(1 for p in self.players.values() if p.online)
