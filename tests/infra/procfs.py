"""Finding ``make run``'s processes through /proc (the tests that kill one of them with -9)."""

from __future__ import annotations

from pathlib import Path


def service_pid(state: Path, name: str) -> int:
    """The pid of make run's ``python -m NAME`` (found by its DATA_DIR, which is under the test's state)."""
    marker = f"DATA_DIR={state / name}".encode()
    for environ in Path("/proc").glob("[0-9]*/environ"):
        try:
            if marker in environ.read_bytes().split(b"\0"):
                return int(environ.parent.name)
        except OSError:
            continue
    raise AssertionError(f"no process of {name} under {state}")
