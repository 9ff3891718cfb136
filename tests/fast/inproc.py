"""An in-process ``grpc.aio`` server for fast tests (same event loop as the test's client)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

import grpc


@contextlib.asynccontextmanager
async def serving(add: Callable[[Any, grpc.aio.Server], None], servicer: Any) -> AsyncIterator[str]:
    """Serve ``servicer`` on a free local port; yields the address."""
    server = grpc.aio.server()
    add(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        await server.stop(0)
