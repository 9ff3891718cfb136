"""Calls about a table go to the dealer replica that deals it (docs/sharding.md, "Routing: the
directory"): :class:`TableRouter`, for any stub of the dealer's services (the gateway's ``Dealer``,
the tournament service's ``TournamentTables``).

A table's call goes to its partition's owner in the :class:`~cardroom.runtime.directory.DealerDirectory`,
on one channel per address (the service's own channel factory: deadlines, mutual TLS); calls about
every table go to every current address (a new table's id names its owner: ``ids.created_table_id``). Without a
directory, or while it names no owner, everything goes to the configured dealer (``DEALER_ADDR``):
one dealer, as before sharding.

A routed call that fails with UNAVAILABLE is tried once more when the directory shows
its table at another owner, or brings a newer claim of its partition within ``move_wait`` seconds
(the old replica gave the table up, the new one is restoring it): :meth:`TableRouter.call`. Streams
reopen themselves with :meth:`TableRouter.moved`.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import grpc
from prometheus_client import Counter

from cardroom.runtime.deadlines import channel
from cardroom.runtime.directory import DealerDirectory

log = logging.getLogger("cardroom.runtime.routing")
S = TypeVar("S")
T = TypeVar("T")

#: Seconds a call that found its table gone waits for the directory to name a new owner.
MOVE_WAIT = 5.0
#: Failures that may mean the table moved: the replica is gone, or no longer deals it (a sharded dealer
#: answers UNAVAILABLE "dealt by another dealer"). NOT_FOUND is an answer: no such table.
MOVED_CODES = frozenset({grpc.StatusCode.UNAVAILABLE})

RETRIED = Counter(
    "cardroom_routed_retries_total", "Calls about a table retried on the new owner the dealer directory named."
)


@dataclass(frozen=True)
class Route(Generic[S]):
    """Where a table's call goes: the stub, the owner's address (None: the configured dealer, no
    claim known) and the epoch of the claim it was routed by (0: none)."""

    stub: S
    address: str | None
    epoch: int


class TableRouter(Generic[S]):
    """Stubs per dealer replica, chosen by table (module docstring)."""

    def __init__(
        self,
        fallback: S,
        make_stub: Callable[[grpc.aio.Channel], S],
        directory: DealerDirectory | None = None,
        *,
        fallback_address: str = "",
        connect: Callable[[str], grpc.aio.Channel] = channel,
        move_wait: float = MOVE_WAIT,
    ) -> None:
        """``fallback``: the stub of the configured dealer (at ``fallback_address``, whose channel
        the caller owns); ``make_stub`` makes a stub on a channel ``connect`` opened to a claimed
        address (the router owns and closes those)."""
        self.fallback = fallback
        self.make_stub = make_stub
        self.directory = directory
        self.connect = connect
        self.move_wait = move_wait
        self._stubs: dict[str, S] = {fallback_address: fallback} if fallback_address else {}
        self._channels: list[grpc.aio.Channel] = []

    def stub_at(self, address: str) -> S:
        """The stub of the replica at ``address`` (one channel per address, opened on first use)."""
        stub = self._stubs.get(address)
        if stub is None:
            opened = self.connect(address)
            self._channels.append(opened)
            stub = self._stubs[address] = self.make_stub(opened)
        return stub

    def route(self, table_id: str) -> Route[S]:
        """Where ``table_id``'s calls go now."""
        if self.directory is None:
            return Route(self.fallback, None, 0)
        address, epoch = self.directory.route(table_id)
        return Route(self.fallback, None, 0) if address is None else Route(self.stub_at(address), address, epoch)

    def for_table(self, table_id: str) -> S:
        return self.route(table_id).stub

    def every(self) -> list[tuple[str | None, S]]:
        """(address, stub) of every current replica; [(None, the configured dealer)] without claims."""
        addresses = self.directory.addresses() if self.directory is not None else []
        if not addresses:
            return [(None, self.fallback)]
        return [(address, self.stub_at(address)) for address in addresses]

    async def moved(self, table_id: str, was: Route[S], code: grpc.StatusCode | None) -> Route[S] | None:
        """After a failure (``code``; None: a stream that ended without a reason) of a call routed by
        ``was``: the table's new route, once the directory shows another owner or a newer claim
        (waiting up to ``move_wait`` s); None when it did not move (or there is no directory)."""
        if self.directory is None or (code is not None and code not in MOVED_CODES):
            return None
        if was.address is None and not self.directory.addresses():
            return None  # no claim at all: one dealer, nothing to move to
        address = await self.directory.changed(table_id, was.address, was.epoch, self.move_wait)
        if address is None:
            return None
        now = self.route(table_id)
        log.info(
            "table moved",
            extra={"table_id": table_id, "from": was.address or "default", "to": now.address, "epoch": now.epoch},
        )
        return now

    async def call(self, table_id: str, fn: Callable[[S], Awaitable[T]]) -> T:
        """``fn`` on the table's owner; once more on the new owner if it failed because the table
        moved (module docstring). Any other failure is raised as it came."""
        route = self.route(table_id)
        try:
            return await fn(route.stub)
        except grpc.aio.AioRpcError as err:
            now = await self.moved(table_id, route, err.code())
            if now is None:
                raise
        RETRIED.inc()
        return await fn(now.stub)

    async def close(self) -> None:
        """Close the channels this router opened (not the configured dealer's)."""
        channels, self._channels = self._channels, []
        for opened in channels:
            await opened.close()
        self._stubs = {a: s for a, s in self._stubs.items() if s is self.fallback}
