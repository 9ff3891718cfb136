"""How a long-running command stops: SIGTERM (a supervisor, ``kill``, ``timeout``) as Ctrl-C does.

Python's default for SIGTERM ends the process at once, skipping every ``finally``: a ``cardroom loadtest
--start-stack`` stopped that way left its whole stack running (Kafka and the seven service processes), its state
dir (some 110 MB) behind, and the stack, writing to the pipe of a process gone, failed its own clean-up.
:func:`terminate_as_interrupt` turns SIGTERM into ``KeyboardInterrupt`` for the block it wraps;
:func:`signals_held` keeps both signals from interrupting a clean-up (each step of which is bounded by its own
timeout), so one impatient second signal does not leave it half done.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

HELD = (signal.SIGINT, signal.SIGTERM)


def _interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt(signal.Signals(signum).name)


def _in_main_thread() -> bool:
    """Handlers can only be set from the main thread (elsewhere the block runs with the signals as they are)."""
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block SIGTERM raises ``KeyboardInterrupt``, as SIGINT does; the handler before it is put back."""
    if not _in_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGTERM, _interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Within the block SIGINT and SIGTERM are ignored (a clean-up runs to its end); their handlers are put back."""
    if not _in_main_thread():
        yield
        return
    previous = {sig: signal.signal(sig, signal.SIG_IGN) for sig in HELD}
    try:
        yield
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


__all__ = ["signals_held", "terminate_as_interrupt"]
