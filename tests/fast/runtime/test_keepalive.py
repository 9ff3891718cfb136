"""Keepalive (cardroom.runtime.keepalive) over real gRPC connections through a TCP relay that can
black-hole them (a peer that vanished without closing its connection: no FIN, no RST):

* a server with the services' options ends a stream whose client vanished (the gateway's Play
  stream of a player gone that way: the disconnect rules then run);
* a channel with the services' options fails a stream whose server vanished (a dealer watch to a
  replica that vanished: the caller reconnects to the table's owner);
* the servers' ping policy lets the channels' pings in: an idle stream stays open, never GOAWAY;
* neither side sends gRPC's bandwidth-delay PINGs (the relay reads the HTTP/2 frames): with gRPC's
  defaults a stream of small messages carries one per message or so.

The intervals here are scaled down (hundreds of ms); the services' own are 20 s / 10 s."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable

import grpc
import pytest

from cardroom.client.connection import PLAYER_CHANNEL_OPTIONS
from cardroom.runtime.keepalive import KEEPALIVE, MIN_RECV_PING_INTERVAL, Keepalive, channel_options, server_options

FAST = Keepalive(time_ms=300, timeout_ms=300)
HOLD = "/test.Keepalive/Hold"
ECHO = "/test.Keepalive/Echo"


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), 30))


PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
PING, ACK = 0x6, 0x1


class Frames:
    """The HTTP/2 frames of one direction of a connection, read from its bytes as they pass
    (RFC 9113 §4.1: a 9-byte header of length, type, flags and stream, then the payload)."""

    def __init__(self, preface: bool) -> None:
        self._buffer = b""
        self._preface = preface
        self.kinds: list[tuple[int, int]] = []
        """(type, flags) of every frame so far."""

    def feed(self, data: bytes) -> None:
        self._buffer += data
        if self._preface:
            if len(self._buffer) < len(PREFACE):
                return
            assert self._buffer.startswith(PREFACE)
            self._buffer, self._preface = self._buffer[len(PREFACE) :], False
        while len(self._buffer) >= 9:
            length = int.from_bytes(self._buffer[:3], "big")
            if len(self._buffer) < 9 + length:
                return
            self.kinds.append((self._buffer[3], self._buffer[4]))
            self._buffer = self._buffer[9 + length :]

    def pings(self) -> int:
        """PINGs sent (not their acknowledgements)."""
        return sum(1 for kind, flags in self.kinds if kind == PING and not flags & ACK)


class Relay:
    """A TCP relay to ``upstream``; :meth:`blackhole` stops it passing bytes either way while
    every socket stays open. It reads the frames each way: :attr:`client_frames` (the client's) and
    :attr:`server_frames`."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.holed = False
        self.server: asyncio.Server | None = None
        self.tasks: set[asyncio.Task[None]] = set()
        self.client_frames = Frames(preface=True)
        self.server_frames = Frames(preface=False)

    async def start(self) -> int:
        self.server = await asyncio.start_server(self._relay, "127.0.0.1", 0)
        return int(self.server.sockets[0].getsockname()[1])

    def blackhole(self) -> None:
        self.holed = True

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, frames: Frames) -> None:
        with contextlib.suppress(ConnectionError):
            while data := await reader.read(65536):
                if not self.holed:
                    frames.feed(data)
                    writer.write(data)
                    await writer.drain()

    async def _relay(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        pipes = (self._pipe(reader, up_writer, self.client_frames), self._pipe(up_reader, writer, self.server_frames))
        for task in pipes:
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


async def echo(requests: AsyncIterator[bytes], context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
    async for request in requests:
        yield request


@contextlib.asynccontextmanager
async def relayed(server_opts: list, channel_opts: list) -> AsyncIterator[tuple[Holder, Relay, grpc.aio.Channel]]:
    holder = Holder()
    server = grpc.aio.server(options=server_opts)
    handler = grpc.method_handlers_generic_handler(
        "test.Keepalive",
        {
            "Hold": grpc.unary_stream_rpc_method_handler(holder.hold),
            "Echo": grpc.stream_stream_rpc_method_handler(echo),
        },
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


async def pings_of_a_paced_exchange(server_opts: list, channel_opts: list) -> tuple[int, int]:
    """(the client's PINGs, the server's) over 6 small messages each way, a quarter second apart (a
    player's actions and the bursts answering them come seconds apart; keepalive's own pings are 20 s
    away)."""
    async with relayed(server_opts, channel_opts) as (_, relay, channel):
        call = channel.stream_stream(ECHO)()
        for n in range(6):
            await call.write(b"an action %d" % n)
            assert await call.read() == b"an action %d" % n
            await asyncio.sleep(0.25)
        await call.done_writing()
        assert await call.code() == grpc.StatusCode.OK
        return relay.client_frames.pings(), relay.server_frames.pings()


def test_neither_the_services_nor_the_players_channels_send_bandwidth_probe_pings() -> None:
    async def body() -> None:
        # the control: with gRPC's defaults each side probes the bandwidth as data comes in, a PING
        # for about every message at this tempo
        client, server = await pings_of_a_paced_exchange([], [])
        assert client >= 4 and server >= 4, (client, server)
        # the services' server with the services' channel (gateway → dealer), then with a player's
        assert await pings_of_a_paced_exchange(server_options(), channel_options()) == (0, 0)
        assert await pings_of_a_paced_exchange(server_options(), PLAYER_CHANNEL_OPTIONS) == (0, 0)

    run(body)
