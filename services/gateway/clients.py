"""The gateway's backends: dealer, wallet and connection monitor stubs on deadline channels."""

from __future__ import annotations

from dataclasses import dataclass

import grpc

from cardroom.runtime.deadlines import insecure_channel
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
    def connect(cls, dealer_addr: str, wallet_addr: str, monitor_addr: str) -> Backends:
        dealer, wallet = insecure_channel(dealer_addr), insecure_channel(wallet_addr)
        monitor = insecure_channel(monitor_addr) if monitor_addr else None
        return cls(
            dealer=dealer_pb2_grpc.DealerStub(dealer),
            wallet=wallet_pb2_grpc.WalletStub(wallet),
            monitor=connection_monitor_pb2_grpc.ConnectionMonitorStub(monitor) if monitor else None,
            channels=[c for c in (dealer, wallet, monitor) if c is not None],
        )

    async def close(self) -> None:
        for channel in self.channels:
            await channel.close()
