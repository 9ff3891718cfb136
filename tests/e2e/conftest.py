"""End-to-end fixtures: the whole card room as real processes on the session's Kafka."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.e2e.stack import Stack


@pytest.fixture(scope="session")
def cardroom(kafka) -> Iterator[Stack]:
    stack = Stack.start(kafka.bootstrap)
    try:
        yield stack
    finally:
        stack.stop()
