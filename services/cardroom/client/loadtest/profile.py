"""py-spy under load: ``py-spy record`` on a service process during the steady state (raw collapsed
stacks), and a summary of them — the share of samples per thread, the top functions by own time
(where the CPU goes) and by inclusive time (which calls cost the most) — beside the CPU each thread
really used over the same window, from the kernel's accounting (/proc).

Read the sample shares with the CPU column next to them: ``--nonblocking`` (needed under load: the
process is never paused) cannot tell a thread sleeping in ``select``/``epoll_wait`` from a running
one, so kafka-python's network threads, which wait in ``select`` most of the time, showed as a third
of the dealer's samples while the kernel counted them at about a fifth of its CPU (docs/capacity.md)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

_FRAME = re.compile(r"^(.*) \((.*?)(?::\d+)?\)$")


def py_spy() -> str | None:
    """The py-spy next to this interpreter (the venv's), else on PATH."""
    local = Path(sys.executable).with_name("py-spy")
    return str(local) if local.exists() else shutil.which("py-spy")


@dataclass(frozen=True)
class ThreadCpu:
    """CPU seconds (user + system) per thread id of one process at one moment, with the threads'
    kernel names (``comm``: grpc's C threads are only named there)."""

    at: float
    seconds: dict[int, float] = field(default_factory=dict)
    names: dict[int, str] = field(default_factory=dict)


def thread_cpu(pid: int) -> ThreadCpu:
    """Each thread's CPU so far, from /proc/PID/task (empty where there is no /proc, or the process is gone)."""
    at = time.monotonic()
    tick = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    seconds: dict[int, float] = {}
    names: dict[int, str] = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return ThreadCpu(at)
    for tid in tids:
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
            comm = Path(f"/proc/{pid}/task/{tid}/comm").read_text().strip()
        except OSError:
            continue  # the thread ended meanwhile
        fields = stat.rsplit(")", 1)[1].split()  # after "pid (comm)": state is fields[0]
        seconds[int(tid)] = (int(fields[11]) + int(fields[12])) / tick  # utime, stime
        names[int(tid)] = comm
    return ThreadCpu(at, seconds, names)


def cores_by_thread(start: ThreadCpu, end: ThreadCpu, names: dict[int, str] | None = None) -> list[tuple[str, float]]:
    """CPU cores each thread used between two readings, busiest first, named by ``names`` (the Python
    thread names py-spy saw) else by the kernel's; threads of one name are added up."""
    elapsed = end.at - start.at
    if elapsed <= 0:
        return []
    cores: dict[str, float] = {}
    for tid, used in end.seconds.items():
        name = (names or {}).get(tid) or end.names.get(tid) or f"tid {tid}"
        cores[name] = cores.get(name, 0.0) + max(0.0, used - start.seconds.get(tid, 0.0)) / elapsed
    return [(name, round(c, 3)) for name, c in sorted(cores.items(), key=lambda kv: -kv[1])]


@dataclass
class Recording:
    name: str
    path: Path
    proc: asyncio.subprocess.Process
    cpu_start: ThreadCpu = field(default_factory=lambda: ThreadCpu(0.0))
    cpu_end: asyncio.Task[ThreadCpu] | None = None

    async def wait(self) -> Path | None:
        await self.proc.wait()
        return self.path if self.proc.returncode == 0 and self.path.exists() else None

    async def cpu(self) -> tuple[ThreadCpu, ThreadCpu] | None:
        """The threads' CPU at the start and at the end of the recording (None without /proc)."""
        if self.cpu_end is None:
            return None
        end = await self.cpu_end
        return (self.cpu_start, end) if self.cpu_start.seconds and end.seconds else None


async def record(
    name: str, pid: int, seconds: float, out: Path, rate: int = 50, native: bool = False
) -> Recording | None:
    """py-spy on ``pid`` for ``seconds`` (``native``: the C and C++ frames too, pausing the process at
    each sample, which py-spy needs for them: a heavier hand on the run than the default)."""
    exe = py_spy()
    if exe is None:
        return None
    path = out / f"profile-{name}.raw"
    args = ["record", "-p", str(pid), "-d", str(max(1, int(seconds))), "-r", str(rate), "--threads"]
    # py-spy reads native stacks only from a paused process; a Python-only profile never pauses it
    args.append("--native" if native else "--nonblocking")
    proc = await asyncio.create_subprocess_exec(
        exe, *args, "-f", "raw", "-o", str(path), stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    start = thread_cpu(pid)

    async def at_the_end() -> ThreadCpu:
        await proc.wait()
        return thread_cpu(pid)  # read the moment py-spy stops: the same window as its samples

    return Recording(name, path, proc, start, asyncio.create_task(at_the_end()))


def frame_name(frame: str) -> str:
    """``func (path/file.py:12)`` -> ``file.py:func`` with the package folder kept (``dealer/fanout.py``)."""
    match = _FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    func, where = match.groups()
    parts = where.split("/")
    return f"{'/'.join(parts[-2:])}:{func}"


def summarize(path: Path, top: int = 15, cpu: tuple[ThreadCpu, ThreadCpu] | None = None) -> dict[str, object]:
    """Thread shares and the top own/inclusive functions of a raw (collapsed) py-spy recording; with
    ``cpu`` (:meth:`Recording.cpu`) also the CPU cores each thread used over it."""
    threads: Counter[str] = Counter()
    thread_names: dict[int, str] = {}
    own: Counter[str] = Counter()
    inclusive: Counter[str] = Counter()
    total = 0
    for line in path.read_text(errors="replace").splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        n = int(count)
        frames = stack.split(";")
        thread = frames[0]
        frames = [frame_name(f) for f in frames[1:]]
        total += n
        name = re.sub(r"\(\d+\)", "", thread).replace("thread :", "").strip()
        threads[name] += n
        tid = re.search(r"\((\d+)\)", thread)
        if tid:
            thread_names[int(tid.group(1))] = name
        if frames:
            own[frames[-1]] += n
        for name in set(frames):
            inclusive[name] += n

    def share(counter: Counter[str]) -> list[tuple[str, float]]:
        return [(k, round(100 * v / total, 1)) for k, v in counter.most_common(top)]

    return {
        "samples": total,
        **({"thread_cpu_cores": cores_by_thread(*cpu, thread_names)[:top]} if cpu else {}),
        "threads_pct": share(threads),
        "own_pct": share(own),
        "inclusive_pct": [(k, p) for k, p in share(Counter({k: v for k, v in inclusive.items() if not _plumbing(k)}))],
    }


def _plumbing(name: str) -> bool:
    """Frames every sample has (the event loop, the thread bootstrap): no information."""
    return any(
        s in name
        for s in (
            "runpy",
            "asyncio/runners",
            "base_events.py",
            "events.py:Handle._run",
            "threading.py",
            "__main__.py",
            "server.py:main",
        )
    )
