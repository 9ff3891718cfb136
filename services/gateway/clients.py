"""The gateway's backends: dealer, wallet and (optional) connection monitor stubs on deadline channels."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from cardroom.runtime.deadlines import insecure_channel
from cardroom.runtime.peers import OptionalPeer
from cardroom.v1 import connection_monitor_pb2_grpc, dealer_pb2_grpc, wallet_pb2_grpc

#: Timeout for long-lived server streams (Watch): the deadline interceptor only fills in a missing one.
STREAM_TIMEOUT = 365 * 24 * 3600.0


@dataclass
class Backends:
    dealer: dealer_pb2_grpc.DealerStub
    wallet: wallet_pb2_grpc.WalletStub
    monitor: connection_monitor_pb2_grpc.ConnectionMonitorStub | None
    channels: list[grpc.aio.Channel]

    @classmethod
    def connect(cls, dealer_addr: str, wallet_addr: str, monitor_addr: str | None) -> Backends:
        """``monitor_addr`` None: no connection monitor (no heartbeats)."""
        dealer, wallet = insecure_channel(dealer_addr), insecure_channel(wallet_addr)
        monitor = OptionalPeer.connect(
            "connection_monitor", monitor_addr, connection_monitor_pb2_grpc.ConnectionMonitorStub
        )
        return cls(
            dealer=dealer_pb2_grpc.DealerStub(dealer),
            wallet=wallet_pb2_grpc.WalletStub(wallet),
            monitor=monitor.stub,
            channels=[c for c in (dealer, wallet, monitor.channel) if c is not None],
        )

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()
