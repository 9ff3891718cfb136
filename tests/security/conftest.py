"""The card room with mutual TLS (the harness default), as real processes, for the attack tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.stack import Stack


@pytest.fixture(scope="module")
def room(kafka) -> Iterator[Stack]:
    stack = Stack.start(kafka.bootstrap)
    try:
        yield stack
    finally:
        stack.stop()
