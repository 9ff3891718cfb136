"""An actor's mailbox: commands queued from anywhere on the loop, run one at a time by the
actor's own task, with idempotent request ids.

``submit`` queues a command and waits for its result. The actor's loop takes commands with
:meth:`Mailbox.next` (waiting at most until its next timer on the injected clock) and runs
each with :meth:`Mailbox.execute`: a command carrying a ``request_id`` already answered
gets the first answer again when its fingerprint matches, or the conflict error when the
same id came with a different request. Results are remembered for ``remember_seconds`` on the
clock (a retry comes within seconds), and for the last ``remember`` request ids at most: a
busy table's answers (about 1.2 KB each) no longer pile up for hours (5,000 of them, 6 MB, a table
of real tempo reached after some nine hours). They live in memory only: a request sent again after a
restart runs again, so a command that moves money keeps its own durable guard (the dealer's
``buy_ins_done``).
"""

from __future__ import annotations

import asyncio
import logging
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from cardroom.runtime import errors
from cardroom.runtime.clock import Clock, SystemClock

log = logging.getLogger("cardroom.runtime.mailbox")
T = TypeVar("T")
#: The reason of a command whose own await was cancelled (UNAVAILABLE: the same request may be sent again).
CANCELLED = "COMMAND_CANCELLED"
R = TypeVar("R")


@dataclass
class Command(Generic[R]):
    """One queued command: what to run, where to answer, and its idempotency identity."""

    run: Callable[[], Awaitable[R]]
    reply: asyncio.Future[R]
    request_id: str = ""
    fingerprint: bytes = b""


def _conflict(request_id: str) -> Exception:
    return ValueError(f"request_id {request_id!r} was already used for a different request")


class Mailbox:
    """See the module docstring. ``expected`` errors are answered without a traceback in the
    log (a rejected command); anything else is logged and answered too."""

    def __init__(
        self,
        *,
        clock: Clock | None = None,
        remember: int = 5000,
        remember_seconds: float = 600.0,
        conflict: Callable[[str], Exception] = _conflict,
        expected: tuple[type[Exception], ...] = (),
        name: str = "",
    ) -> None:
        self.clock: Clock = clock if clock is not None else SystemClock()
        self.remember = remember
        self.remember_seconds = remember_seconds
        self.conflict = conflict
        self.expected = expected
        self.name = name
        self.queue: asyncio.Queue[Command[Any]] = asyncio.Queue()
        #: request id -> (fingerprint, result, when on the clock), the oldest first
        self.done: OrderedDict[str, tuple[bytes, Any, float]] = OrderedDict()
        #: Set by :meth:`close`: every command from then on is refused with it.
        self.closed_with: Exception | None = None

    def __len__(self) -> int:
        return self.queue.qsize()

    async def submit(self, run: Callable[[], Awaitable[T]], request_id: str = "", fingerprint: bytes = b"") -> T:
        """Queue ``run`` and wait for its result (with a ``request_id``, a repeat gets the first)."""
        if self.closed_with is not None:
            raise self.closed_with
        reply: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self.queue.put_nowait(Command(run, reply, request_id, fingerprint))
        return await reply

    def close(self, error: Exception) -> None:
        """No command runs any more (the actor stopped for good): the queued ones and every later one
        are answered ``error``."""
        self.closed_with = error
        while True:
            try:
                command = self.queue.get_nowait()
            except asyncio.QueueEmpty:
                break
            _answer(command, error=error)

    async def next(self, wait: float | None) -> Command[Any] | None:
        """A queued command at once, else wait for one at most ``wait`` seconds on the clock
        (None: forever; <= 0: do not wait). None when the wait ran out."""
        try:
            return self.queue.get_nowait()
        except asyncio.QueueEmpty:
            if wait is not None and wait <= 0:
                return None
        if wait is None:
            return await self.queue.get()
        getter = asyncio.ensure_future(self.queue.get())
        timer = asyncio.ensure_future(self.clock.sleep(wait))
        try:
            await asyncio.wait((getter, timer), return_when=asyncio.FIRST_COMPLETED)
        finally:
            timer.cancel()
            if not getter.done():
                getter.cancel()
        if getter.done() and not getter.cancelled():
            return getter.result()
        return None

    async def execute(self, command: Command[Any]) -> None:
        """Run one command and answer it (see the module docstring); never raises. A caller that
        gave up (deadline, cancel) while its command ran has no one to answer: the command still
        took effect (or not) as a whole, its result is remembered for a retry with the same
        request id, and the actor goes on."""
        if command.reply.done():
            return
        if command.request_id:
            seen = self.done.get(command.request_id)
            if seen is not None:
                if seen[0] != command.fingerprint:
                    _answer(command, error=self.conflict(command.request_id))
                else:
                    _answer(command, result=seen[1])
                return
        try:
            result = await command.run()
        except self.expected as err:
            _answer(command, error=err)
            return
        except Exception as exc:
            log.exception("command failed", extra={"actor": self.name})
            _answer(command, error=exc)
            return
        except asyncio.CancelledError:
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                # the actor itself is being stopped: its caller is told, then the stop goes on
                _answer(command, error=errors.unavailable(f"{self.name}: stopped; try again", CANCELLED))
                raise
            # something the command awaited was cancelled (not the actor): a failed command, not
            # a dead actor — left to propagate, it ended the actor's task as if it were stopped
            log.error("command cancelled from inside", extra={"actor": self.name})
            _answer(command, error=errors.unavailable(f"{self.name}: the command was cancelled; try again", CANCELLED))
            return
        if command.request_id:
            self._remember(command, result)
        _answer(command, result=result)

    def _remember(self, command: Command[Any], result: Any) -> None:
        """Keep ``result`` for a repeat of the command's request id; forget the answers older than
        ``remember_seconds`` and beyond the last ``remember``."""
        self.done[command.request_id] = (command.fingerprint, result, self.clock.now())
        self.forget_expired()

    def forgets_at(self) -> float | None:
        """When, on the clock, the oldest answer kept expires (None: none kept)."""
        if not self.done:
            return None
        return next(iter(self.done.values()))[2] + self.remember_seconds

    def forget_expired(self) -> None:
        """Forget the answers older than ``remember_seconds`` and beyond the last ``remember``: done with
        every new answer; an owner that takes no more commands (a closed table) calls it at
        :meth:`forgets_at`, or it would keep its last answers for good."""
        done, oldest = self.done, self.clock.now() - self.remember_seconds
        while done and (len(done) > self.remember or next(iter(done.values()))[2] <= oldest):
            done.popitem(last=False)


def _answer(command: Command[Any], *, result: Any = None, error: BaseException | None = None) -> None:
    """Answer the caller if it still waits (a cancelled reply future takes no answer)."""
    if command.reply.done():
        return
    if error is not None:
        command.reply.set_exception(error)
    else:
        command.reply.set_result(result)
