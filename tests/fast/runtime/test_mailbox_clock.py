"""Fast tier: the runtime's actor mailbox and the manual clock."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from cardroom.runtime.clock import ManualClock, SystemClock
from cardroom.runtime.mailbox import Mailbox


def serving(box: Mailbox) -> asyncio.Task[None]:
    """The actor's loop on ``box``: take each command and run it (cancel the task to end it)."""

    async def serve() -> None:
        while True:
            command = await box.next(None)
            assert command is not None
            await box.execute(command)

    return asyncio.create_task(serve())


def test_manual_clock_wakes_sleepers_only_when_advanced_past_their_deadline() -> None:
    async def body() -> None:
        clock = ManualClock(100.0)
        woke: list[float] = []

        async def sleeper(seconds: float) -> None:
            await clock.sleep(seconds)
            woke.append(clock.now())

        tasks = [asyncio.create_task(sleeper(s)) for s in (5.0, 1.0)]
        await asyncio.sleep(0)
        assert clock.next_wakeup == 101.0
        clock.advance(0.5)
        await asyncio.sleep(0)
        assert woke == []
        clock.advance(0.5)
        await asyncio.sleep(0)
        assert woke == [101.0]
        clock.set(110.0)
        await asyncio.gather(*tasks)
        assert woke == [101.0, 110.0]
        with pytest.raises(ValueError):
            clock.advance(-1)

    asyncio.run(body())


def test_system_clock_reads_the_time() -> None:
    import time

    before = time.time()
    assert before <= SystemClock().now() <= time.time()


def test_mailbox_waits_on_its_clock_and_replays_request_ids() -> None:
    async def body() -> None:
        clock = ManualClock()
        box = Mailbox(clock=clock, remember=2)
        waiting = asyncio.create_task(box.next(10.0))
        await asyncio.sleep(0)
        clock.advance(9.9)
        await asyncio.sleep(0)
        assert not waiting.done()
        clock.advance(0.2)
        assert await waiting is None  # the wait ran out on the clock

        runs: list[int] = []

        async def work(n: int) -> int:
            runs.append(n)
            return n * 10

        server = serving(box)
        assert await box.submit(lambda: work(1), "r1", b"f1") == 10
        assert await box.submit(lambda: work(2), "r1", b"f1") == 10  # replayed, not run
        with pytest.raises(ValueError, match="already used"):
            await box.submit(lambda: work(3), "r1", b"other")
        assert await box.submit(lambda: work(4)) == 40  # no id: always runs
        for i in (5, 6):
            await box.submit(lambda i=i: work(i), f"r{i}", b"")
        assert await box.submit(lambda: work(7), "r1", b"f1") == 70  # forgotten after 2 newer ids
        assert runs == [1, 4, 5, 6, 7]
        server.cancel()

    asyncio.run(asyncio.wait_for(body(), 5))


def test_mailbox_forgets_answers_older_than_its_window() -> None:
    """An answer is kept for a repeat of its request id for ``remember_seconds`` on the clock, then
    forgotten (a busy table's answers piled up for hours, about 1.2 KB each); the newer ones stay."""

    async def body() -> None:
        clock = ManualClock()
        box = Mailbox(clock=clock, remember_seconds=600.0)
        runs: list[str] = []

        async def work(name: str) -> str:
            runs.append(name)
            return name

        server = serving(box)
        assert await box.submit(lambda: work("a"), "ra", b"fa") == "a"
        clock.advance(300)
        assert await box.submit(lambda: work("b"), "rb", b"fb") == "b"
        clock.advance(299)
        assert await box.submit(lambda: work("a again"), "ra", b"fa") == "a"  # 599 s: the first answer
        assert runs == ["a", "b"] and list(box.done) == ["ra", "rb"]
        clock.advance(2)  # ra answered 601 s ago: forgotten as the next answer is kept
        assert await box.submit(lambda: work("c"), "rc", b"fc") == "c"
        assert list(box.done) == ["rb", "rc"]
        assert await box.submit(lambda: work("a, a third time"), "ra", b"fa") == "a, a third time"  # runs again
        assert await box.submit(lambda: work("b again"), "rb", b"fb") == "b"  # 303 s: still kept
        assert runs == ["a", "b", "c", "a, a third time"]
        server.cancel()

    asyncio.run(asyncio.wait_for(body(), 5))


def test_a_caller_giving_up_mid_command_never_stops_the_actor() -> None:
    """Issue 14 (faults, 6): "If a caller gives up (a 3 ms deadline ...) while the table actor runs
    its command, the actor sets a result on a cancelled future, its task dies, and the table ignores
    everything." The command still takes effect as a whole, a retry with the same request id gets
    its result, and the actor answers the next caller."""

    async def body() -> None:
        box = Mailbox()
        started, release = asyncio.Event(), asyncio.Event()
        applied: list[str] = []

        async def slow() -> str:
            started.set()
            await release.wait()
            applied.append("slow")
            return "done"

        server = serving(box)
        caller = asyncio.create_task(box.submit(slow, "r1", b"f"))
        await started.wait()
        caller.cancel()  # the caller's deadline ran out while the command runs
        with pytest.raises(asyncio.CancelledError):
            await caller
        release.set()
        assert await asyncio.wait_for(box.submit(slow, "r1", b"f"), 2) == "done"  # the retry: same answer
        assert applied == ["slow"]  # applied once
        assert not server.done()  # the actor lives on

        async def quick() -> str:
            return "next"

        assert await asyncio.wait_for(box.submit(quick), 2) == "next"
        server.cancel()

    asyncio.run(body())


def test_a_command_whose_own_await_is_cancelled_fails_alone_and_the_actor_lives_on() -> None:
    """A command awaiting something that another task cancels (not the actor being stopped) gets
    CancelledError inside the actor's task. Left to propagate it ended the actor's task as a stop
    would, and that table never answered again (issue 16: tables stalled for good, no error logged).
    The command now fails alone (UNAVAILABLE, "try again") and the next one is answered."""
    from cardroom.runtime.errors import ServiceError
    from cardroom.runtime.mailbox import CANCELLED

    async def body() -> None:
        box = Mailbox(name="t1")
        inner: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        async def waits_on_inner() -> str:
            await inner
            return "never"

        server = serving(box)
        caller = asyncio.create_task(box.submit(waits_on_inner))
        await asyncio.sleep(0.01)
        inner.cancel()  # e.g. a client call the command awaited, cancelled by its channel
        with pytest.raises(ServiceError) as caught:
            await asyncio.wait_for(caller, 2)
        assert caught.value.code == grpc.StatusCode.UNAVAILABLE and caught.value.reason == CANCELLED
        assert not server.done()

        async def quick() -> str:
            return "next"

        assert await asyncio.wait_for(box.submit(quick), 2) == "next"
        server.cancel()
        with pytest.raises(asyncio.CancelledError):  # stopping the actor itself still stops it
            await server

    asyncio.run(body())
