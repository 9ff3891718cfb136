"""The live progress line: tables, players, hands/s, actions/s, p50/p99 act latency (last 5 s),
errors. Pinned at the bottom of a terminal (rich Live); plain lines every few seconds otherwise."""

from __future__ import annotations

import sys
from types import TracebackType
from typing import Self

from rich.console import Console
from rich.live import Live
from rich.text import Text

from cardroom.client.loadtest.recorder import Recorder
from cardroom.client.loadtest.services import LOAD_GENERATOR, ProcessSampler, is_load_generator
from cardroom.client.loadtest.settings import LoadSettings

#: Seconds the rates and percentiles of the line are computed over.
WINDOW = 5.0
#: Without a terminal: one line every so many seconds.
PLAIN_EVERY = 5.0


class Progress:
    def __init__(self, recorder: Recorder, settings: LoadSettings, sampler: ProcessSampler) -> None:
        self.recorder, self.settings, self.sampler = recorder, settings, sampler
        self.console = Console(file=sys.stdout)
        self.live: Live | None = None
        self.last_plain = 0.0

    async def __aenter__(self) -> Self:
        if self.console.is_terminal:
            self.live = Live(Text(""), console=self.console, refresh_per_second=4, transient=False)
            self.live.start()
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.live is not None:
            self.live.update(Text(self.line()))
            self.live.stop()
        else:
            print(self.line(), flush=True)

    def line(self) -> str:
        r, s = self.recorder, self.settings
        now = r.now()
        until = now if r.heard_until is None else min(now, r.heard_until)  # what the generators have sent
        w = r.window(max(0.0, until - WINDOW), until)
        w.end = until
        w.start = max(0.0, until - WINDOW)
        phase = "ramp" if r.steady_from is None else "steady"
        end = s.duration if r.steady_from is None else r.steady_from + s.steady
        total_errors = sum(sum(b.errors.values()) for b in r.buckets.values())
        latest = {name: samples[-1].cpu for name, samples in self.sampler.samples.items() if samples}
        shown = {name: cpu for name, cpu in latest.items() if name in ("dealer", "gateway", "kafka")}
        if generators := [cpu for name, cpu in latest.items() if is_load_generator(name)]:
            shown[LOAD_GENERATOR] = sum(generators)  # every load-generator process
        cpu = "  ".join(f"{name} {cpu:.2f}" for name, cpu in shown.items())
        return (
            f"{now:6.1f}/{end:.0f}s {phase:6}  tables {r.tables}  players {r.seated}/{s.players}"
            f" (streams {r.connected})  {w.hands / w.seconds:6.2f} hands/s  {w.actions / w.seconds:7.1f} actions/s"
            f"  act p50 {w.ms(50):6.1f} ms p99 {w.ms(99):7.1f} ms  errors {total_errors}"
            + (f"  cpu {cpu}" if cpu else "")
            + (f"  steal {self.sampler.machine[-1].steal:.2f}" if self.sampler.machine else "")
        )

    def update(self) -> None:
        if self.live is not None:
            self.live.update(Text(self.line()))
        elif self.recorder.now() - self.last_plain >= PLAIN_EVERY:
            self.last_plain = self.recorder.now()
            print(self.line(), flush=True)

    def note(self, text: str) -> None:
        if self.live is not None:
            self.live.console.print(text)
        else:
            print(text, flush=True)
