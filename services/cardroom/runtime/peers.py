"""Peers a service can run without (e.g. the gateway without the connection monitor): the
address comes from the environment, and an empty value — or ``off`` / ``none`` — turns the
peer off, where :func:`cardroom.runtime.config.env_str` would fall back to the default."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

import grpc

from cardroom.runtime.deadlines import insecure_channel

#: Values that turn an optional peer off.
OFF = frozenset({"", "off", "none"})
S = TypeVar("S")


def optional_address(name: str, default: str) -> str | None:
    """``$name`` when set, None when set to empty/``off``/``none``, ``default`` when unset
    (an empty ``default`` meaning off by default)."""
    raw = os.environ.get(name)
    value = default if raw is None else raw.strip()
    return None if value.lower() in OFF else value


@dataclass
class OptionalPeer(Generic[S]):
    """A stub on a deadline channel, or nothing when the peer is off."""

    name: str
    address: str | None
    stub: S | None = None
    channel: grpc.aio.Channel | None = None

    @classmethod
    def connect(cls, name: str, address: str | None, stub: Callable[[grpc.aio.Channel], S]) -> OptionalPeer[S]:
        if address is None:
            return cls(name, None)
        channel = insecure_channel(address)
        return cls(name, address, stub(channel), channel)

    @property
    def enabled(self) -> bool:
        return self.stub is not None

    def describe(self) -> str:
        """The address, or "off" (for the start-up log)."""
        return self.address or "off"

    async def close(self) -> None:
        if self.channel is not None:
            await self.channel.close()
