"""The gateway's backends: dealer, wallet and the optional connection monitor and tournament service
stubs on deadline channels; :func:`forward`, how a backend's refusal becomes the gateway's."""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass
from typing import TypeVar

import grpc

from cardroom.runtime import errors
from cardroom.runtime.deadlines import insecure_channel
from cardroom.runtime.peers import OptionalPeer
from cardroom.v1 import connection_monitor_pb2_grpc, dealer_pb2_grpc, tournament_pb2_grpc, wallet_pb2_grpc

T = TypeVar("T")

#: Timeout for long-lived server streams (Watch): the deadline interceptor only fills in a missing one.
STREAM_TIMEOUT = 365 * 24 * 3600.0


@dataclass
class Backends:
    dealer: dealer_pb2_grpc.DealerStub
    wallet: wallet_pb2_grpc.WalletStub
    monitor: connection_monitor_pb2_grpc.ConnectionMonitorStub | None
    channels: list[grpc.aio.Channel]
    tournament: tournament_pb2_grpc.TournamentStub | None = None
    """None: tournaments are off here (no ``TOURNAMENT_ADDR``)."""

    @classmethod
    def connect(
        cls, dealer_addr: str, wallet_addr: str, monitor_addr: str | None, tournament_addr: str | None = None
    ) -> Backends:
        """``monitor_addr`` None: no connection monitor (no heartbeats); ``tournament_addr`` None: no
        tournament service (the tournament calls are refused)."""
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
        )

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()


async def forward(call: Awaitable[T]) -> T:
    """Await a backend call; its error status (code, reason, violations) becomes ours."""
    try:
        return await call
    except grpc.aio.AioRpcError as err:
        raise errors.error_from_call(err) from None
