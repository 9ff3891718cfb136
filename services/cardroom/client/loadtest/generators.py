"""The load generator as several processes (``--generators N``): Python runs one core per process, and
one generator's own event loop, late under thousands of players, reads as the card room's latency.

The coordinating process (runner.py) creates the tables, deals them round the generators
(crowd.shares), and each generator process plays its share (a :class:`~.crowd.Crowd`) and sends what
its players saw, every progress tick, over a pipe: the new one-second buckets (added to the
coordinator's recorder: the run's clock is the machine's monotonic clock, the same in every process),
its seated / connected / arrived counts and its first errors. The coordinator tells them when the
steady state begins and when to stop; at the end each sends its :class:`~.crowd.Finish`. With one
generator (the default) the crowd runs in the coordinating process itself (:class:`Local`).

A generator that dies is an error of the run (``EXITED (load generator)``) and its players' balances
are unknown, so the run's drift cannot be checked."""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import signal
import time
from multiprocessing.connection import Connection
from typing import Any, Protocol

from cardroom.client.loadtest.crowd import STOP_SECONDS, Balances, Crowd, Finish, Share
from cardroom.client.loadtest.recorder import Recorder
from cardroom.client.loadtest.services import LOAD_GENERATOR, Target
from cardroom.client.loadtest.settings import LoadSettings
from cardroom.v1 import dealer_pb2 as d

#: How long a generator process may take to start (its imports) before the run gives up.
READY_SECONDS = 60.0
#: The coordinator's wait for a generator's end beyond the players' own stop time.
FINISH_GRACE_SECONDS = 30.0
#: The process name of generator ``i`` (1-based) in the report's processes.
NAME = LOAD_GENERATOR + "-gen{}"


class Generator(Protocol):
    share: Share

    def targets(self) -> list[Target]: ...
    async def ready(self) -> None: ...
    async def play(self, tables: dict[int, d.TableInfo], recorder: Recorder) -> None: ...
    def poll(self, recorder: Recorder) -> tuple[int, int, int]: ...
    def heard_until(self) -> float | None: ...
    def steady(self) -> None: ...
    async def finish(self, recorder: Recorder) -> Finish: ...
    async def close(self) -> None: ...


class Local:
    """The crowd in the coordinating process: its players write to the run's recorder directly."""

    def __init__(self, settings: LoadSettings, run_id: str, share: Share) -> None:
        self.settings, self.run_id, self.share = settings, run_id, share
        self.crowd: Crowd | None = None

    def targets(self) -> list[Target]:
        return []  # the coordinator is sampled as "loadtest"

    async def ready(self) -> None:
        pass

    async def play(self, tables: dict[int, d.TableInfo], recorder: Recorder) -> None:
        self.crowd = Crowd(self.settings, self.run_id, self.share, tables, recorder)
        self.crowd.start()

    def poll(self, recorder: Recorder) -> tuple[int, int, int]:
        return recorder.seated, recorder.connected, recorder.arrived

    def heard_until(self) -> float | None:
        return None  # its players record in the run's recorder: everything is in

    def steady(self) -> None:
        if self.crowd is not None:
            self.crowd.steady()

    async def finish(self, recorder: Recorder) -> Finish:
        assert self.crowd is not None
        return await self.crowd.stop()

    async def close(self) -> None:
        if self.crowd is not None:
            await self.crowd.close()


class Remote:
    """A generator process (spawned, not forked: grpc's threads do not survive a fork)."""

    def __init__(self, settings: LoadSettings, run_id: str, share: Share) -> None:
        self.settings, self.run_id, self.share = settings, run_id, share
        context = multiprocessing.get_context("spawn")
        self.conn, child = context.Pipe()
        self.name = NAME.format(share.generator + 1)
        self.process = context.Process(target=main, args=(child,), name=self.name, daemon=True)
        self.process.start()
        child.close()
        self.gauges = (0, 0, 0)
        self.heard = 0.0  # the whole seconds its buckets have been sent for
        self.finished: Finish | None = None
        self.players = 0

    def targets(self) -> list[Target]:
        return [Target(self.name, pid=self.process.pid)]

    async def ready(self) -> None:
        """Wait for the process to have started (imported what it plays with: its memory then is its idle
        figure in the report)."""
        if not await asyncio.to_thread(self.conn.poll, READY_SECONDS):
            raise RuntimeError(f"{self.name} did not start within {READY_SECONDS:.0f} s")
        try:
            message = self.conn.recv()
        except (EOFError, OSError) as err:
            raise RuntimeError(f"{self.name} ended as it started (exit code {self.process.exitcode})") from err
        if message != ("ready",):
            raise RuntimeError(f"{self.name} said {message[0]!r} before it was ready")

    async def play(self, tables: dict[int, d.TableInfo], recorder: Recorder) -> None:
        self.players = len(tables) * self.settings.players_per_table
        wire = [(t, info.SerializeToString()) for t, info in tables.items()]
        self._send(("play", self.settings, self.run_id, self.share, wire, recorder.started, recorder.started_at))

    def _send(self, message: tuple[Any, ...]) -> None:
        with contextlib.suppress(OSError):  # gone: poll() says so
            self.conn.send(message)

    def poll(self, recorder: Recorder) -> tuple[int, int, int]:
        """What the generator sent since the last poll, merged into ``recorder``; its gauges."""
        try:
            while self.conn.poll():
                kind, at, buckets, gauges, examples, *rest = self.conn.recv()
                recorder.merge(buckets)
                self.gauges, self.heard = gauges, float(int(at))
                for text, example_kind in examples:
                    recorder.keep(text, example_kind)
                if kind == "done":
                    self.finished = rest[0]
        except (EOFError, OSError):
            pass
        return self.gauges

    def heard_until(self) -> float | None:
        return self.heard

    def steady(self) -> None:
        self._send(("steady",))

    async def finish(self, recorder: Recorder) -> Finish:
        self._send(("stop",))
        deadline = time.monotonic() + STOP_SECONDS + FINISH_GRACE_SECONDS
        while self.finished is None and time.monotonic() < deadline:
            self.poll(recorder)
            if self.finished is None and not self.process.is_alive():
                self.poll(recorder)  # what it sent before it ended
                break
            await asyncio.sleep(0.1)
        if self.finished is not None:
            return self.finished
        code = self.process.exitcode
        recorder.error("load generator", "EXITED", f"{self.name}: exit code {code}, its players' balances unknown")
        note = f"{self.name} {'ended' if code is not None else 'did not end'} without its players' figures"
        return Finish({}, [], Balances(self.players, 0, 0), [note])

    async def close(self) -> None:
        self._send(("stop",))
        await asyncio.to_thread(self.process.join, 5.0)
        if self.process.is_alive():
            self.process.kill()
            await asyncio.to_thread(self.process.join, 5.0)
        self.conn.close()


def start(settings: LoadSettings, run_id: str, shares: list[Share]) -> list[Generator]:
    """The run's generators: one share in this process, or one process per share."""
    if len(shares) == 1:
        return [Local(settings, run_id, shares[0])]
    return [Remote(settings, run_id, share) for share in shares]


# ---------------------------------------------------------------------- in the generator process
def main(conn: Connection) -> None:
    """A generator process: wait for its share, play it, send what it saw until told to stop (or until
    the coordinator is gone)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the coordinator's: it stops the run
    try:
        conn.send(("ready",))
        message = conn.recv()
    except (EOFError, OSError):
        return
    if message[0] != "play":
        return
    _, settings, run_id, share, wire, started, started_at = message
    tables = {t: d.TableInfo.FromString(raw) for t, raw in wire}
    asyncio.run(_generate(conn, settings, run_id, share, tables, Recorder(started=started, started_at=started_at)))


async def _generate(
    conn: Connection,
    settings: LoadSettings,
    run_id: str,
    share: Share,
    tables: dict[int, d.TableInfo],
    recorder: Recorder,
) -> None:
    crowd = Crowd(settings, run_id, share, tables, recorder)
    crowd.start()
    sent = 0  # examples already sent

    def report(kind: str, *rest: Any) -> None:
        nonlocal sent
        gauges = (recorder.seated, recorder.connected, recorder.arrived)
        examples = list(zip(recorder.examples[sent:], recorder.example_kinds[sent:], strict=True))
        conn.send((kind, recorder.now(), recorder.drain(), gauges, examples, *rest))
        sent = len(recorder.examples)

    try:
        while True:
            await asyncio.sleep(settings.progress_every)
            report("tick")
            while conn.poll():
                command = conn.recv()[0]
                if command == "steady":
                    crowd.steady()
                elif command == "stop":
                    finish = await crowd.stop()
                    report("done", finish)
                    return
    except (EOFError, OSError, BrokenPipeError):  # the coordinator is gone: stop playing
        await crowd.close()
