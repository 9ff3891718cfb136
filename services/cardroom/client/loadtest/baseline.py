"""The bare-gRPC baseline of the same run: a grpc.aio echo server in its own process and grpc.aio
clients here (unary calls, and ping-pong on bidi streams — one message out, wait for its echo, as a
player's act and its result), on the same machine as the card room, so the report can give the card
room's actions/s as a ratio of what gRPC alone moves here.

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

SERVICE = "cardroom.loadtest.Echo"
PAYLOAD = b"x" * 96  # about a PlayRequest with an act


def echo_handler() -> grpc.GenericRpcHandler:
    """Raw bytes in, the same bytes out (no serializers: no protobuf cost in the baseline)."""

    async def unary(request: bytes, _context: grpc.aio.ServicerContext) -> bytes:
        return request

    async def stream(requests: AsyncIterator[bytes], _context: grpc.aio.ServicerContext) -> AsyncIterator[bytes]:
        async for request in requests:
            yield request

    return grpc.method_handlers_generic_handler(
        SERVICE,
        {"Unary": grpc.unary_unary_rpc_method_handler(unary), "Stream": grpc.stream_stream_rpc_method_handler(stream)},
    )


async def serve(port: int) -> None:
    server = grpc.aio.server()
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

    def summary(self) -> dict[str, float]:
        return {
            "unary_calls_per_s": round(self.unary_per_s, 1),
            "bidi_round_trips_per_s": round(self.stream_per_s, 1),
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
        pool = [
            grpc.aio.insecure_channel(address, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(channels)
        ]
        try:
            for channel in pool:
                await channel.channel_ready()
            rates = []
            for mode in (_unary, _stream):
                await asyncio.gather(*(mode(pool[i % channels], time.perf_counter() + 0.3) for i in range(concurrency)))
                start = time.perf_counter()
                counts = await asyncio.gather(*(mode(pool[i % channels], start + seconds) for i in range(concurrency)))
                rates.append(sum(counts) / (time.perf_counter() - start))
        finally:
            for channel in pool:
                await channel.close()
        return Baseline(rates[0], rates[1], concurrency, seconds)
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
