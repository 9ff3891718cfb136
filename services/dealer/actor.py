"""One table as an asyncio actor: its own mailbox and task, no lock shared with others.

Everything that changes the table runs inside the actor's task, one command at a time:
gRPC commands (queued by :meth:`TableActor.submit`), the action clock (the loop wakes at the
turn's deadline on the injected clock and calls ``Table.tick``) and the hand cycle (deal,
settle, pause, deal). Reads (lobby, state, Watch subscription) look at the state between
two awaits, so they always see it consistent.

The actor is assembled from one module per concern (see :mod:`dealer.state`):

* mailbox and idempotency — :class:`cardroom.runtime.mailbox.Mailbox`;
* watchers and Kafka fan-out — :mod:`dealer.fanout`;
* snapshots — :mod:`dealer.snapshots`;
* escrow write-ahead — :mod:`dealer.writeahead`;
* the hand cycle — :mod:`dealer.hand_cycle`;
* command validation — :mod:`dealer.commands`;
* crash recovery — :mod:`dealer.recovery` (reading the snapshots: :mod:`dealer.restore`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TypeVar

from cardroom.core import ids
from cardroom.runtime.mailbox import Mailbox
from dealer import metrics
from dealer.deps import Deps
from dealer.errors import DealerError, exists
from dealer.recovery import Recovery
from dealer.state import log
from dealer.tablespec import TableSpec

T = TypeVar("T")
DONE_REQUESTS = 5000
#: A table's loop not ended this long after its cancellation is cancelled again (:meth:`TableActor.stop`).
STOP_AGAIN_S = 1.0


def _conflict(request_id: str) -> DealerError:
    return exists(f"request_id {request_id!r} was already used for a different request")


class TableActor(Recovery):
    """A table, its money and its watchers (see the module docstring)."""

    def __init__(self, table_id: str, spec: TableSpec, deps: Deps) -> None:
        super().__init__(table_id, spec, deps)
        self.mailbox = Mailbox(
            clock=self.clock,
            remember=DONE_REQUESTS,
            conflict=_conflict,
            expected=(DealerError, ids.InvalidId),  # refusals, answered without a traceback
            name=table_id,
        )
        self.task: asyncio.Task[None] | None = None
        self.stopping = False
        self.restarts = 0

    def start(self) -> None:
        """Start the table's loop: one per actor (two would run each command twice)."""
        if self.task is not None and not self.task.done():
            raise RuntimeError(f"table {self.table_id!r}: its loop is running already")
        self.task = asyncio.create_task(self._loop(), name=f"table:{self.table_id}")
        self.task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task[None]) -> None:
        """The loop never ends but by :meth:`stop`: should anything kill it, the table is not left
        silently dead (issue 14 item 6) — it is counted, logged and started again from its state in
        memory (the same one the next snapshot holds); the queued commands are then answered."""
        if self.stopping:
            return
        # cancelled without stop(): something cancelled the loop from inside (an awaited call);
        # the table would otherwise stop dealing for good with no error (issue 16's stalled tables)
        error = asyncio.CancelledError() if task.cancelled() else task.exception()
        self.restarts += 1
        delay = min(5.0, 0.05 * 2 ** (self.restarts - 1))  # a loop that dies at once is not spun
        metrics.ACTOR_RESTARTS.inc()
        log.error(
            "table loop died; restarting it",
            extra={"table_id": self.table_id, "error": repr(error), "restarts": self.restarts, "in_s": delay},
        )
        asyncio.get_running_loop().call_later(delay, self._restart)

    def _restart(self) -> None:
        if not self.stopping:
            self.start()

    async def stop(self, why: str = "stopping") -> None:
        """Stop the table's loop and end its watchers with ``why`` ("stopping": shutdown, "moved": another
        replica deals it now)."""
        self.stopping = True
        task = self.task
        if task is not None:
            # Cancelled again until it ends: a cancellation lost on the way (python/cpython#86296, Python
            # 3.11's wait_for) left a table of a partition given up running here (docs/sharding.md).
            while not task.done():
                task.cancel()
                await asyncio.wait({task}, timeout=STOP_AGAIN_S)
            error = None if task.cancelled() else task.exception()
            if error is not None:
                raise error
        for w in list(self.watchers):
            w.end(why)

    async def submit(self, run: Callable[[], Awaitable[T]], request_id: str = "", fingerprint: bytes = b"") -> T:
        """Run ``run`` inside the actor; with a ``request_id`` a repeat returns the first result."""
        return await self.mailbox.submit(run, request_id, fingerprint)

    def retirable(self) -> bool:
        """Closed, and nothing about it lives in memory only: no answer kept for a repeat, no command
        queued, no watcher, nothing to write, pay or publish, no timer (:mod:`dealer.retired`): its
        snapshot alone brings it back as it is."""
        return (
            self.closed
            and not self.stopping
            and not self.mailbox.done
            and not len(self.mailbox)
            and not self.watchers
            and not self.close_waiters
            and not self.has_pending
            and self._wake_in() is None
        )

    def _wait(self) -> float | None:
        """Seconds until the loop has something to do (None: only a command wakes it). A closed table
        takes no more commands, so its mailbox would keep its last answers for good: the loop wakes to
        forget them when they expire (a closed table lives on in its dealer: "table id taken")."""
        wait = self._wake_in()
        forgets = self.mailbox.forgets_at() if self.closed else None
        if forgets is None:
            return wait
        due = max(0.0, forgets - self.clock.now())
        return due if wait is None else min(wait, due)

    async def _loop(self) -> None:
        while not self.stopping:  # a stop ends it even if its cancellation was lost (see :meth:`stop`)
            command = await self.mailbox.next(self._wait())
            if self.closed:
                self.mailbox.forget_expired()
            if command is not None:
                try:  # execute never raises; should it, the table must not die with it
                    await self.mailbox.execute(command)
                except Exception:
                    log.exception("command not answered", extra={"table_id": self.table_id})
            if self.stopping:
                break
            try:
                await self._advance()
            except Exception:
                log.exception("table step failed", extra={"table_id": self.table_id})
                await self.clock.sleep(1.0)
