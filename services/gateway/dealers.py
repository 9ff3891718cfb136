"""The gateway's dealer replicas: :class:`DealerRouter`, the runtime's
:class:`~cardroom.runtime.routing.TableRouter` on ``Dealer`` stubs, with the calls about every table
asked of every replica and their replies merged (docs/sharding.md, "Routing: the directory").

Without ``DEALER_DIRECTORY_TOPIC`` (or before the first claim) there is one replica, the configured
``DEALER_ADDR``, and every call goes there as before sharding."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

import grpc

from cardroom.runtime.deadlines import channel
from cardroom.runtime.directory import DealerDirectory
from cardroom.runtime.routing import MOVE_WAIT, TableRouter
from cardroom.v1 import dealer_pb2 as d, dealer_pb2_grpc

log = logging.getLogger("gateway.dealers")


def replica_channel(address: str) -> grpc.aio.Channel:
    """A channel to a dealer replica at the address it claimed with (its certificate names ``dealer``)."""
    return channel(address, server_name="dealer")


R = TypeVar("R")

#: A replica failing with these is left out of a merged answer that may be partial (the lobby, a
#: player's hands); any other failure is the answer's.
PASSED_OVER = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})


def merge_tables(
    replies: Iterable[tuple[str | None, d.ListTablesResponse]], owner: Callable[[str], str | None]
) -> d.ListTablesResponse:
    """Every replica's tables once each (by id, in the order met); a table two replicas list (one
    giving it up, one taking it over) as its current ``owner`` lists it."""
    chosen: dict[str, d.TableInfo] = {}
    from_owner: set[str] = set()
    for address, reply in replies:
        for info in reply.tables:
            if info.table_id in from_owner:
                continue
            if address is not None and owner(info.table_id) == address:
                from_owner.add(info.table_id)
            elif info.table_id in chosen:
                continue
            chosen[info.table_id] = info
    return d.ListTablesResponse(tables=list(chosen.values()))


def merge_hands(replies: Iterable[d.PlayerHandsResponse], limit: int) -> d.PlayerHandsResponse:
    """A player's hands from every replica, newest first, each hand once, at most ``limit`` (0: all)."""
    seen: dict[str, d.RecentHand] = {}
    for reply in replies:
        for hand in reply.hands:
            seen.setdefault(hand.hand_id, hand)
    hands = sorted(seen.values(), key=lambda h: (h.finished_at.seconds, h.finished_at.nanos), reverse=True)
    return d.PlayerHandsResponse(hands=hands[:limit] if limit > 0 else hands)


class DealerRouter(TableRouter[dealer_pb2_grpc.DealerStub]):
    """``Dealer`` stubs by table; the lobby and a player's hands from every replica."""

    def __init__(
        self,
        fallback: dealer_pb2_grpc.DealerStub,
        directory: DealerDirectory | None = None,
        *,
        fallback_address: str = "",
        connect: Callable[[str], grpc.aio.Channel] = replica_channel,
        move_wait: float = MOVE_WAIT,
    ) -> None:
        super().__init__(
            fallback,
            dealer_pb2_grpc.DealerStub,
            directory,
            fallback_address=fallback_address,
            connect=connect,
            move_wait=move_wait,
        )

    async def gather(
        self, fn: Callable[[dealer_pb2_grpc.DealerStub], Awaitable[R]], *, partial: bool
    ) -> list[tuple[str | None, R]]:
        """``fn`` on every replica at once: (address, reply) of each. With ``partial`` a replica
        failing with UNAVAILABLE or DEADLINE_EXCEEDED is left out (logged) while another answered;
        otherwise the first failure is raised."""
        targets = self.every()
        results = await asyncio.gather(*(fn(stub) for _, stub in targets), return_exceptions=True)
        replies: list[tuple[str | None, R]] = []
        failures: list[tuple[str | None, grpc.aio.AioRpcError]] = []
        for (address, _), result in zip(targets, results, strict=True):
            if isinstance(result, grpc.aio.AioRpcError):
                failures.append((address, result))
            elif isinstance(result, BaseException):
                raise result
            else:
                replies.append((address, result))
        for address, err in failures:
            if not partial or not replies or err.code() not in PASSED_OVER:
                raise err
            log.warning(
                "dealer replica left out of a merged answer", extra={"address": address, "code": err.code().name}
            )
        return replies

    async def list_tables(self, request: d.ListTablesRequest, *, partial: bool = True) -> d.ListTablesResponse:
        """Every replica's tables (``partial``: see :meth:`gather`)."""
        replies = await self.gather(lambda dealer: dealer.ListTables(request), partial=partial)
        return merge_tables(replies, self._owner)

    async def player_hands(self, request: d.PlayerHandsRequest) -> d.PlayerHandsResponse:
        """The player's recent hands kept by every replica, merged (newest first, ``request.limit``)."""
        replies = await self.gather(lambda dealer: dealer.PlayerHands(request), partial=True)
        return merge_hands((reply for _, reply in replies), request.limit)

    def _owner(self, table_id: str) -> str | None:
        return self.directory.owner(table_id) if self.directory is not None else None
