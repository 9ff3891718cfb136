"""py-spy under load: ``py-spy record`` on a service process during the steady state (raw collapsed
stacks), and a summary of them — the share of samples per thread, the top functions by own time
(where the CPU goes) and by inclusive time (which calls cost the most)."""

from __future__ import annotations

import asyncio
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

_FRAME = re.compile(r"^(.*) \((.*?)(?::\d+)?\)$")


def py_spy() -> str | None:
    """The py-spy next to this interpreter (the venv's), else on PATH."""
    local = Path(sys.executable).with_name("py-spy")
    return str(local) if local.exists() else shutil.which("py-spy")


@dataclass
class Recording:
    name: str
    path: Path
    proc: asyncio.subprocess.Process

    async def wait(self) -> Path | None:
        await self.proc.wait()
        return self.path if self.proc.returncode == 0 and self.path.exists() else None


async def record(name: str, pid: int, seconds: float, out: Path, rate: int = 50) -> Recording | None:
    exe = py_spy()
    if exe is None:
        return None
    path = out / f"profile-{name}.raw"
    proc = await asyncio.create_subprocess_exec(
        exe,
        "record",
        "-p",
        str(pid),
        "-d",
        str(max(1, int(seconds))),
        "-r",
        str(rate),
        "--threads",
        "--nonblocking",
        "-f",
        "raw",
        "-o",
        str(path),
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return Recording(name, path, proc)


def frame_name(frame: str) -> str:
    """``func (path/file.py:12)`` -> ``file.py:func`` with the package folder kept (``dealer/fanout.py``)."""
    match = _FRAME.match(frame.strip())
    if not match:
        return frame.strip()
    func, where = match.groups()
    parts = where.split("/")
    return f"{'/'.join(parts[-2:])}:{func}"


def summarize(path: Path, top: int = 15) -> dict[str, object]:
    """Thread shares and the top own/inclusive functions of a raw (collapsed) py-spy recording."""
    threads: Counter[str] = Counter()
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
        threads[re.sub(r"\(\d+\)", "", thread).replace("thread :", "").strip()] += n
        if frames:
            own[frames[-1]] += n
        for name in set(frames):
            inclusive[name] += n

    def share(counter: Counter[str]) -> list[tuple[str, float]]:
        return [(k, round(100 * v / total, 1)) for k, v in counter.most_common(top)]

    return {
        "samples": total,
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
