"""The browser tests' card room: Chromium and the web build (installs, not services), then every
service as a process (tests/e2e/stack.py) and Envoy in front of the gateway."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.stack import Stack
from tests.web.proxy import EnvoyProcess, build_web, install_chromium


def web_room(bootstrap: str, **settings: Any) -> Iterator[tuple[Stack, EnvoyProcess, str]]:
    """Chromium and the web build first (installs, not services), then the card room
    (``Stack.start(bootstrap, **settings)``) and Envoy."""
    chromium = install_chromium()
    dist = build_web()
    stack = Stack.start(bootstrap, **settings)
    try:
        envoy = EnvoyProcess(stack.address("gateway"), dist).start()
        try:
            yield stack, envoy, chromium
        finally:
            envoy.stop()
    finally:
        stack.stop()


@pytest.fixture(scope="module")
def web_stack(kafka) -> Iterator[tuple[Stack, EnvoyProcess, str]]:
    """The card room with the tournament service (the lobby's tournaments) and Envoy."""
    yield from web_room(kafka.bootstrap, tournaments=True)
