"""CreateTable sent again: the same table, from the request id alone.

A CreateTable without a table id names its table from its request id (``ids.created_table_id``), so a retry
(its answer lost) finds the table it made; the dealer kept a map of every create request it had served for
that besides, one entry per table for the life of the process, which said nothing the id did not."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from cardroom.core import ids
from cardroom.v1 import dealer_pb2, dealer_pb2_grpc
from dealer.service import DealerService, Tables
from tests.fast.dealer.fakes import harness, nl_config
from tests.fast.inproc import serving


def test_a_create_sent_again_gets_the_same_table_and_a_closed_one_stays_taken() -> None:
    async def body() -> None:
        h = harness(start=False)
        tables = Tables(h.actor.deps)
        async with serving(dealer_pb2_grpc.add_DealerServicer_to_server, DealerService(tables)) as addr:
            async with grpc.aio.insecure_channel(addr) as channel:
                stub = dealer_pb2_grpc.DealerStub(channel)
                create = dealer_pb2.CreateTableRequest(config=nl_config(), request_id="r-new")
                first = await stub.CreateTable(create)
                again = await stub.CreateTable(create)
                assert first.table_id == again.table_id == ids.created_table_id("r-new")
                assert list(tables.actors) == [first.table_id]
                other = await stub.CreateTable(dealer_pb2.CreateTableRequest(config=nl_config(), request_id="r-2"))
                assert other.table_id != first.table_id

                await stub.CloseTable(dealer_pb2.CloseTableRequest(table_id=first.table_id))
                assert tables.retire_idle() == [first.table_id]
                with pytest.raises(grpc.aio.AioRpcError) as taken:  # retired, its id still taken
                    await stub.CreateTable(create)
                assert taken.value.code() == grpc.StatusCode.ALREADY_EXISTS and "closed" in (
                    taken.value.details() or ""
                )
        await tables.stop()

    asyncio.run(asyncio.wait_for(body(), 20))
