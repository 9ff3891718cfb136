"""A dealer with one table on an in-process gRPC server, for the fast tests of its streams."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import grpc

from cardroom.runtime.clock import ManualClock
from cardroom.v1 import dealer_pb2_grpc
from dealer.actor import TableActor
from dealer.deps import Deps
from dealer.service import DealerService, Tables
from dealer.tablespec import build
from tests.fast.dealer.fakes import FakeChecker, FakePublisher, FakeWallet, FakeWriters, nl_config
from tests.fast.inproc import serving


@asynccontextmanager
async def dealer_server(
    publisher: FakePublisher, clock: ManualClock
) -> AsyncIterator[tuple[dealer_pb2_grpc.DealerStub, TableActor]]:
    """Table fast-1 (NL Hold'em; ann and bob hold 5,000 each in the wallet) on an in-process
    dealer server: its stub and the table's actor (stopped at the end)."""
    deps = Deps(
        FakeWallet(balances={"ann": 5000, "bob": 5000}),
        publisher,
        FakeChecker(),
        clock=clock,
        writers=FakeWriters(publisher),
    )
    tables = Tables(deps)
    actor = TableActor("fast-1", build(nl_config()), deps)
    tables.add(actor)
    try:
        async with serving(dealer_pb2_grpc.add_DealerServicer_to_server, DealerService(tables)) as address:
            async with grpc.aio.insecure_channel(address) as channel:
                yield dealer_pb2_grpc.DealerStub(channel), actor
    finally:
        await actor.stop()
