"""The load test's bare 6-seat tables (the fan-out baseline): every message a seat sends reaches all six
seats of its table and no other table, in order, and a table whose streams end is forgotten."""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator

import grpc

from cardroom.client.loadtest import baseline


@contextlib.asynccontextmanager
async def echo_server() -> AsyncIterator[tuple[str, baseline.BareTables]]:
    server = grpc.aio.server()
    tables = baseline.BareTables()
    server.add_generic_rpc_handlers((baseline.echo_handler(tables),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}", tables
    finally:
        await server.stop(0)


def run(body) -> None:  # type: ignore[no-untyped-def]
    asyncio.run(asyncio.wait_for(body(), 20))


def test_a_seat_s_message_reaches_every_seat_of_its_table_and_no_other() -> None:
    async def body() -> None:
        async with echo_server() as (address, tables):
            async with grpc.aio.insecure_channel(address) as channel:
                table = [channel.stream_stream(f"/{baseline.SERVICE}/Table")() for _ in range(6)]
                other = [channel.stream_stream(f"/{baseline.SERVICE}/Table")() for _ in range(2)]
                for call in table:
                    await call.write(b"a")
                for call in other:
                    await call.write(b"b")
                for call in table + other:
                    assert await call.read() == baseline.JOINED
                assert sorted(len(m) for m in tables.members.values()) == [2, 6]
                # two seats' messages, one after the other: sent together on two streams, the server may
                # read them in either order (CI once had "two" first)
                for seat, message in ((2, b"one"), (5, b"two")):
                    await table[seat].write(message)
                    for call in table:
                        assert await call.read() == message
                await other[0].write(b"elsewhere")
                for call in other:
                    assert await call.read() == b"elsewhere"
                for call in table:
                    await call.done_writing()
                    assert await call.read() == grpc.aio.EOF
                await asyncio.sleep(0.05)
                assert list(tables.members) == [b"b"]  # the ended table is forgotten
                for call in other:
                    await call.done_writing()

    run(body)


def test_play_table_counts_whole_rounds_on_six_channels() -> None:
    async def body() -> None:
        async with echo_server() as (address, tables):
            channels = [grpc.aio.insecure_channel(address) for _ in range(3)]
            try:
                rounds = await baseline.play_table(
                    [channels[i % 3] for i in range(baseline.SEATS)], b"t0", time.perf_counter() + 0.3
                )
            finally:
                for channel in channels:
                    await channel.close()
            assert rounds > 0
            await asyncio.sleep(0.05)
            assert tables.members == {}

    run(body)
