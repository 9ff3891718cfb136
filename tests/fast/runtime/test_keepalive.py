"""Keepalive (cardroom.runtime.keepalive) over real gRPC connections through a TCP relay that can
black-hole them (a peer that vanished without closing its connection: no FIN, no RST):

* a server with the services' options ends a stream whose client vanished (the gateway's Play
  stream of a player gone that way: the disconnect rules then run);
* a channel with the services' options fails a stream whose server vanished (a dealer watch to a
  replica that vanished: the caller reconnects to the table's owner);
* the servers' ping policy lets the channels' pings in: an idle stream stays open, never GOAWAY.

The intervals here are scaled down (hundreds of ms); the services' own are 20 s / 10 s."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
import pytest

from cardroom.runtime.keepalive import KEEPALIVE, MIN_RECV_PING_INTERVAL, Keepalive, channel_options, server_options

FAST = Keepalive(time_ms=300, timeout_ms=300)
HOLD = "/test.Keepalive/Hold"


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 30))


class Relay:
    """A TCP relay to ``upstream``; :meth:`blackhole` stops it passing bytes either way while
    every socket stays open."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.holed = False
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    def blackhole(self) -> None:
        self.holed = True

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                if not self.holed:
                    writer.write(data)
                    await writer.drain()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        for task in (self._pipe(reader, up_writer), self._pipe(up_reader, writer)):
            t = asyncio.create_task(task)
            self.tasks.add(t)

    async def close(self) -> None:
        for t in self.tasks:
            t.cancel()
        if self.server is not None:
            self.server.close()


class Holder:
    """``Hold``: sends one message at once, another when :attr:`more` is set, then holds the stream
    open; :attr:`ended` is set when the server let the call go (cancelled: its client is gone)."""

    def __init__(self) -> None:
        self.more = asyncio.Event()
        self.ended = asyncio.Event()

    async def hold(self, request: bytes, context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        try:
            yield b"first"
            await self.more.wait()
            yield b"second"
            await asyncio.sleep(3600)
        finally:
            self.ended.set()


@contextlib.asynccontextmanager
async def relayed(server_opts: list, channel_opts: list) -> AsyncIterator[tuple[Holder, Relay, grpc.aio.Channel]]:
    holder = Holder()
    server = grpc.aio.server(options=server_opts)
    handler = grpc.method_handlers_generic_handler(
        "test.Keepalive", {"Hold": grpc.unary_stream_rpc_method_handler(holder.hold)}
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    relay = Relay(port)
    address = f"127.0.0.1:{await relay.start()}"
    channel = grpc.aio.insecure_channel(address, options=channel_opts)
    try:
        yield holder, relay, channel
    finally:
        await channel.close()
        await relay.close()
        await server.stop(0)


def test_a_server_with_the_options_lets_go_of_a_stream_whose_client_vanished() -> None:
    async def body() -> None:
        async with relayed(server_options(FAST), []) as (holder, relay, channel):
            call = channel.unary_stream(HOLD)(b"")
            assert await call.read() == b"first"
            relay.blackhole()
            await asyncio.wait_for(holder.ended.wait(), 10)  # pings unanswered: the server let it go
            call.cancel()

    run(body)


def test_a_channel_with_the_options_fails_a_stream_whose_server_vanished() -> None:
    async def body() -> None:
        async with relayed([], channel_options(FAST)) as (_, relay, channel):
            call = channel.unary_stream(HOLD)(b"")
            assert await call.read() == b"first"
            relay.blackhole()
            with pytest.raises(grpc.aio.AioRpcError) as failed:
                await asyncio.wait_for(call.read(), 10)
            assert failed.value.code() == grpc.StatusCode.UNAVAILABLE

    run(body)


def test_the_servers_ping_policy_keeps_an_idle_stream_of_a_pinging_channel_open() -> None:
    async def body() -> None:
        async with relayed(server_options(FAST), channel_options(FAST)) as (holder, _, channel):
            call = channel.unary_stream(HOLD)(b"")
            assert await call.read() == b"first"
            # five of the channel's pings (gRPC sends at most one a second), no data: with the
            # server's default floor (5 minutes) the third ping past the first is GOAWAY
            await asyncio.sleep(5.5)
            assert not holder.ended.is_set()
            holder.more.set()
            assert await asyncio.wait_for(call.read(), 5) == b"second"  # no GOAWAY (too_many_pings)
            call.cancel()

    run(body)


def test_the_services_setting_finds_a_vanished_peer_within_half_a_minute_and_is_checked() -> None:
    assert KEEPALIVE.time_ms + KEEPALIVE.timeout_ms <= 30_000
    assert dict(server_options())[MIN_RECV_PING_INTERVAL] < KEEPALIVE.time_ms
    with pytest.raises(ValueError):
        Keepalive(time_ms=0)
