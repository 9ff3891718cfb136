"""The gateway's backends: dealer, wallet and the optional connection monitor and tournament service
stubs on deadline channels, the dealer replicas by table (:class:`~gateway.dealers.DealerRouter`);
:func:`forward`, how a backend's refusal becomes the gateway's."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from dataclasses import dataclass, field
from typing import TypeVar

import grpc

from cardroom.runtime import errors
from cardroom.runtime.deadlines import insecure_channel
from cardroom.runtime.directory import DealerDirectory
from cardroom.runtime.peers import OptionalPeer
from cardroom.v1 import connection_monitor_pb2_grpc, dealer_pb2_grpc, tournament_pb2_grpc, wallet_pb2_grpc
from gateway.dealers import DealerRouter
from gateway.feeds import TableFeeds

T = TypeVar("T")


@dataclass
class Backends:
    dealer: dealer_pb2_grpc.DealerStub
    """The configured dealer (``DEALER_ADDR``): where :attr:`dealers` sends what no claim routes."""
    wallet: wallet_pb2_grpc.WalletStub
    monitor: connection_monitor_pb2_grpc.ConnectionMonitorStub | None
    channels: list[grpc.aio.Channel]
    tournament: tournament_pb2_grpc.TournamentStub | None = None
    """None: tournaments are off here (no ``TOURNAMENT_ADDR``)."""
    directory: DealerDirectory | None = None
    """The dealer directory (``DEALER_DIRECTORY_TOPIC``), started; None: one dealer, ``dealer``."""
    dealer_addr: str = ""
    table_feeds: bool = True
    """Sessions follow their tables through one dealer feed per table (``GATEWAY_TABLE_FEEDS``)."""
    dealers: DealerRouter = field(init=False)
    """Every dealer call goes through it: by table, to every replica, or in turn for a new table."""
    feeds: TableFeeds | None = field(init=False)
    """The table feeds the sessions follow their tables by; None: each session watches alone."""

    def __post_init__(self) -> None:
        self.dealers = DealerRouter(self.dealer, self.directory, fallback_address=self.dealer_addr)
        self.feeds = TableFeeds(self.dealers) if self.table_feeds else None

    @classmethod
    def connect(
        cls,
        dealer_addr: str,
        wallet_addr: str,
        monitor_addr: str | None,
        tournament_addr: str | None = None,
        directory: DealerDirectory | None = None,
        table_feeds: bool = True,
    ) -> Backends:
        """``monitor_addr`` None: no connection monitor (no heartbeats); ``tournament_addr`` None: no
        tournament service (the tournament calls are refused); ``directory`` (started; stopped by
        :meth:`close`) None: every dealer call goes to ``dealer_addr``."""
        dealer, wallet = insecure_channel(dealer_addr), insecure_channel(wallet_addr)
        monitor = OptionalPeer.connect(
            "connection_monitor", monitor_addr, connection_monitor_pb2_grpc.ConnectionMonitorStub
        )
        tournament = OptionalPeer.connect("tournament", tournament_addr, tournament_pb2_grpc.TournamentStub)
        return cls(
            dealer=dealer_pb2_grpc.DealerStub(dealer),
            wallet=wallet_pb2_grpc.WalletStub(wallet),
            monitor=monitor.stub,
            channels=[c for c in (dealer, wallet, monitor.channel, tournament.channel) if c is not None],
            tournament=tournament.stub,
            directory=directory,
            dealer_addr=dealer_addr,
            table_feeds=table_feeds,
        )

    async def close(self) -> None:
        if self.feeds is not None:
            await self.feeds.close()
        await self.dealers.close()
        for channel in self.channels:
            await channel.close()
        if self.directory is not None:
            await asyncio.get_running_loop().run_in_executor(None, self.directory.stop)


async def forward(call: Awaitable[T]) -> T:
    """Await a backend call; its error status (code, reason, violations) becomes ours."""
    try:
        return await call
    except grpc.aio.AioRpcError as err:
        raise errors.error_from_call(err) from None
