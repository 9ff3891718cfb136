"""The load test's profile of a service: py-spy's samples beside the CPU each thread really used
(the kernel's accounting), because ``py-spy --nonblocking`` counts a thread waiting in ``select`` as
busy — kafka-python's network threads looked like a third of the dealer's CPU (docs/capacity.md)."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

from cardroom.client.loadtest import profile, report

linux_only = pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")


@linux_only
def test_thread_cpu_tells_a_busy_thread_from_one_waiting() -> None:
    ids: dict[str, int] = {}
    spun = threading.Event()
    release = threading.Event()

    def burner() -> None:
        ids["burner"] = threading.get_native_id()
        while time.thread_time() < 0.3:  # its own CPU time, however loaded the machine is
            pass
        spun.set()
        release.wait()

    def sleeper() -> None:
        ids["sleeper"] = threading.get_native_id()
        release.wait()

    threads = [threading.Thread(target=burner, name="burner"), threading.Thread(target=sleeper, name="sleeper")]
    for t in threads:
        t.start()
    try:
        assert spun.wait(60)
        cpu = profile.thread_cpu(os.getpid())
    finally:
        release.set()
        for t in threads:
            t.join()
    assert cpu.seconds[ids["burner"]] >= 0.25  # clock ticks: 10 ms apart
    assert cpu.seconds[ids["sleeper"]] < 0.05


def test_cores_by_thread_over_the_window_named_by_py_spy_else_by_the_kernel() -> None:
    start = profile.ThreadCpu(10.0, {1: 5.0, 2: 1.0, 3: 0.0, 4: 0.5}, {1: "python", 2: "python", 3: "grpc", 4: "grpc"})
    end = profile.ThreadCpu(
        12.0, {1: 6.0, 2: 1.1, 3: 0.2, 4: 0.7, 5: 0.1}, {1: "python", 2: "python", 3: "grpc", 4: "grpc", 5: "new"}
    )
    cores = profile.cores_by_thread(start, end, {1: "MainThread", 2: "kafka-network-thread"})
    assert cores == [("MainThread", 0.5), ("grpc", 0.2), ("kafka-network-thread", 0.05), ("new", 0.05)]
    assert profile.cores_by_thread(end, end) == []  # no time passed: no rate


def test_the_summary_and_the_report_put_the_kernels_cpu_beside_the_samples(tmp_path: Path) -> None:
    raw = tmp_path / "profile-dealer.raw"
    raw.write_text(
        "thread (11): MainThread;run (asyncio/base_events.py:600);act (dealer/commands.py:12) 30\n"
        "thread (12): cardroom-dealer-network-thread;run (threading.py:1);select (selectors.py:468) 70\n"
    )
    start = profile.ThreadCpu(0.0, {11: 0.0, 12: 0.0}, {11: "python", 12: "python"})
    end = profile.ThreadCpu(10.0, {11: 6.0, 12: 1.0}, {11: "python", 12: "python"})
    summary = profile.summarize(raw, cpu=(start, end))
    assert summary["threads_pct"] == [("cardroom-dealer-network-thread", 70.0), ("MainThread", 30.0)]
    assert summary["thread_cpu_cores"] == [("MainThread", 0.6), ("cardroom-dealer-network-thread", 0.1)]
    assert "thread_cpu_cores" not in profile.summarize(raw)  # no /proc readings: the samples only
    page = report.write_html(
        {"settings": {"scenario": "max"}, "headline": "h", "profiles": {"dealer": {"raw": str(raw), **summary}}},
        [],
        tmp_path,
    ).read_text()
    assert "CPU cores (kernel)" in page and "0.600 MainThread" in page
