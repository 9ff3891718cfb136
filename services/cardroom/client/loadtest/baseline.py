"""The bare-gRPC baseline of the same run: a grpc.aio echo server in its own process and grpc.aio
clients here, on the same machine as the card room, so the report can give the card room's actions/s
as a ratio of what gRPC alone moves here. Three modes, each for the same seconds:

* unary calls;
* ping-pong on bidi streams: one message out, wait for its echo, as a player's act and its result
  (the issue's yardstick: "the bare bidi-stream echo rate");
* a bare table (fan-out): six bidi streams per table, each on its own channel; one stream sends, the
  server sends that message to all six, and the next stream sends once all six have read it. One
  round is what one action at a 6-max table is at the least: one message in and one out to each
  player (docs/capacity.md, "Why max throughput will not reach half of bare bidi").

Its connections are tuned as the card room's are (no bandwidth-delay probe, a player's channel
options), so the ratio compares the card room's work with the same transport's.

``python -m cardroom.client.loadtest.baseline PORT`` serves (prints ``ready`` once listening)."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc

from cardroom.client.connection import PLAYER_CHANNEL_OPTIONS
from cardroom.runtime.keepalive import NO_BDP_PROBE

SERVICE = "cardroom.loadtest.Echo"
PAYLOAD = b"x" * 96  # about a PlayRequest with an act
SEATS = 6  # streams per bare table
JOINED = b"joined"


class BareTables:
    """The bare tables the server knows: each table's members' queues (by the key a stream sent first)."""

    def __init__(self) -> None:
        self.members: dict[bytes, list[asyncio.Queue[bytes | None]]] = {}

    async def serve(self, requests: AsyncIterator[bytes]) -> AsyncIterator[bytes]:
        incoming = requests.__aiter__()
        key = await incoming.__anext__()
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()
        members = self.members.setdefault(key, [])
        members.append(queue)

        async def relay() -> None:  # this stream's messages to every member of its table, itself included
            try:
                async for message in incoming:
                    for member in members:
                        member.put_nowait(message)
            finally:
                queue.put_nowait(None)

        task = asyncio.create_task(relay())
        try:
            yield JOINED
            while (message := await queue.get()) is not None:
                yield message
        finally:
            task.cancel()
            members.remove(queue)
            if not members:
                self.members.pop(key, None)


def echo_handler(tables: BareTables | None = None) -> grpc.GenericRpcHandler:
    """Raw bytes in, the same bytes out (no serializers: no protobuf cost in the baseline); ``Table``
    sends each message to every stream of its table (of ``tables``, new by default)."""
    served = tables if tables is not None else BareTables()

    async def unary(request: bytes, _context: grpc.aio.ServicerContext) -> bytes:
        return request

    async def stream(requests: AsyncIterator[bytes], _context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async for request in requests:
            yield request

    async def table(requests: AsyncIterator[bytes], _context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async for message in served.serve(requests):
            yield message

    return grpc.method_handlers_generic_handler(
        SERVICE,
        {
            "Unary": grpc.unary_unary_rpc_method_handler(unary),
            "Stream": grpc.stream_stream_rpc_method_handler(stream),
            "Table": grpc.stream_stream_rpc_method_handler(table),
        },
    )


async def serve(port: int) -> None:
    server = grpc.aio.server(options=[NO_BDP_PROBE])
    server.add_generic_rpc_handlers((echo_handler(),))
    bound = server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print(f"ready {bound}", flush=True)
    await server.wait_for_termination()


@dataclass
class Baseline:
    unary_per_s: float
    stream_per_s: float
    concurrency: int
    seconds: float
    #: rounds/s of the bare tables (one message in, ``SEATS`` out), 0 when not measured
    fanout_per_s: float = 0.0
    tables: int = 0

    def summary(self) -> dict[str, float]:
        return {
            "unary_calls_per_s": round(self.unary_per_s, 1),
            "bidi_round_trips_per_s": round(self.stream_per_s, 1),
            "fanout_rounds_per_s": round(self.fanout_per_s, 1),
            "fanout_tables": self.tables,
            "fanout_seats": SEATS,
            "concurrency": self.concurrency,
            "seconds_per_mode": self.seconds,
        }


async def _unary(channel: grpc.aio.Channel, until: float) -> int:
    call = channel.unary_unary(f"/{SERVICE}/Unary")
    n = 0
    while time.perf_counter() < until:
        await call(PAYLOAD)
        n += 1
    return n


async def _stream(channel: grpc.aio.Channel, until: float) -> int:
    call = channel.stream_stream(f"/{SERVICE}/Stream")()
    n = 0
    while time.perf_counter() < until:
        await call.write(PAYLOAD)
        await call.read()
        n += 1
    await call.done_writing()
    return n


async def play_table(channels: list[grpc.aio.Channel], key: bytes, until: float) -> int:
    """One bare table: ``len(channels)`` streams join ``key``; they send in turn, each round ending
    when every stream has read the message. Returns the rounds played."""
    calls = [channel.stream_stream(f"/{SERVICE}/Table")() for channel in channels]
    for call in calls:
        await call.write(key)
    for call in calls:
        if await call.read() != JOINED:
            raise RuntimeError("the bare table did not answer its join")
    n = 0
    while time.perf_counter() < until:
        await calls[n % len(calls)].write(PAYLOAD)
        got = await asyncio.gather(*(call.read() for call in calls))
        if any(message != PAYLOAD for message in got):
            raise RuntimeError("a bare table's stream read something else than the round's message")
        n += 1
    for call in calls:
        await call.done_writing()
    return n


async def _fanout(pool: list[grpc.aio.Channel], tables: int, until: float) -> int:
    counts = await asyncio.gather(
        *(
            play_table([pool[(t * SEATS + i) % len(pool)] for i in range(SEATS)], f"t{t}".encode(), until)
            for t in range(tables)
        )
    )
    return sum(counts)


async def measure(seconds: float = 3.0, concurrency: int = 32, channels: int = 8) -> Baseline:
    """Start the echo server process, drive it for ``seconds`` per mode, stop it."""
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cardroom.client.loadtest.baseline", "0", stdout=subprocess.PIPE
    )
    try:
        assert proc.stdout is not None
        line = (await asyncio.wait_for(proc.stdout.readline(), 60)).decode()
        if not line.startswith("ready"):
            raise RuntimeError(f"the echo server did not start: {line!r}")
        address = f"127.0.0.1:{line.split()[1]}"
        pool = [grpc.aio.insecure_channel(address, options=PLAYER_CHANNEL_OPTIONS) for _ in range(channels)]
        try:
            for channel in pool:
                await channel.channel_ready()
            rates = []
            for mode in (_unary, _stream):
                await asyncio.gather(*(mode(pool[i % channels], time.perf_counter() + 0.3) for i in range(concurrency)))
                start = time.perf_counter()
                counts = await asyncio.gather(*(mode(pool[i % channels], start + seconds) for i in range(concurrency)))
                rates.append(sum(counts) / (time.perf_counter() - start))
            tables = max(1, concurrency // 4)
            await _fanout(pool, tables, time.perf_counter() + 0.3)
            start = time.perf_counter()
            rounds = await _fanout(pool, tables, start + seconds)
            fanout = rounds / (time.perf_counter() - start)
        finally:
            for channel in pool:
                await channel.close()
        return Baseline(rates[0], rates[1], concurrency, seconds, fanout, tables)
    finally:
        with contextlib.suppress(ProcessLookupError):
            proc.terminate()
        try:
            await asyncio.wait_for(proc.wait(), 5)
        except TimeoutError:
            proc.kill()
            await proc.wait()


if __name__ == "__main__":
    asyncio.run(serve(int(sys.argv[1]) if len(sys.argv) > 1 else 0))
