"""``cardroom loadtest --start-stack`` stops its stack however it is stopped itself.

Found on 2026-12-08: a load test ended with SIGTERM (``kill``, ``timeout``, a CI step's cancel) died at once,
skipping its clean-up: the stack it had started (run.py: Kafka and every service) ran on, and when run.py was
stopped later its own clean-up wrote to the pipe of the dead load test and broke before it stopped Kafka.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from cardroom.cli.main import main
from cardroom.client.loadtest.stack import RunStack

SERVICES = Path(__file__).resolve().parents[3] / "services"

#: A load test whose stack, once started, gets the SIGTERM a supervisor would send; the stack says it was stopped.
TERMINATED = """
import os, signal, sys, time
from pathlib import Path
from cardroom.cli.main import main
from cardroom.client.loadtest import stack

mark = Path(sys.argv[1])

class Stack(stack.RunStack):
    def start(self, timeout=300.0):
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
        raise AssertionError("SIGTERM did not stop the load test")

    def stop(self):
        mark.write_text("stopped")

stack.RunStack = Stack
sys.exit(main(["loadtest", "--start-stack", "--out", str(mark.parent / "out")]))
"""


def test_sigterm_stops_the_stack_as_ctrl_c_does(tmp_path: Path) -> None:
    mark = tmp_path / "stack-stopped"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(SERVICES), os.environ.get("PYTHONPATH", "")]),
        "TMPDIR": str(tmp_path),  # where the run's own state dir goes: removed at the end
    }
    done = subprocess.run(
        [sys.executable, "-c", TERMINATED, str(mark)], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 130, (done.returncode, done.stderr[-2000:])  # as after Ctrl-C, not killed (-15)
    assert mark.read_text() == "stopped"
    assert not list(tmp_path.glob("cardroom-loadtest-*"))


#: run.py's stand-in: says where its services are, then writes far more than a pipe holds (as run.py's stop
#: does, line by line, for each service and Kafka), then leaves a mark.
CHATTY = """
import sys
from pathlib import Path
print("gateway grpc=127.0.0.1:1 metrics=http://127.0.0.1:2/metrics", flush=True)
print("logs: here", flush=True)
for i in range(20000):
    print(f"line {i} " + "x" * 60)
sys.stdout.flush()
state = Path(sys.argv[sys.argv.index("--state-dir") + 1])
state.mkdir(parents=True, exist_ok=True)
(state / "finished").write_text("yes")
"""


def test_what_the_stack_writes_after_its_start_is_read_and_kept(tmp_path: Path) -> None:
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(CHATTY))
    state = tmp_path / "state"
    stack = RunStack(state, script=script).start(timeout=30)
    assert stack.gateway == "127.0.0.1:1"
    assert stack.proc is not None
    try:
        stack.proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        pytest.fail("run.py blocked on a full pipe nobody read")
    stack.stop()  # ended by itself: nothing to signal, the copy of what it wrote completes
    assert stack.proc.returncode == 0 and (state / "finished").exists()
    logged = (state / "log" / "run.log").read_text().splitlines()
    assert len(logged) == 20000 and logged[-1].startswith("line 19999 ")


def test_the_handlers_are_put_back_after_the_run(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    class Failed(Exception):
        pass

    class Stack(RunStack):
        def start(self, timeout: float = 300.0) -> RunStack:
            raise Failed

    monkeypatch.setattr("cardroom.client.loadtest.stack.RunStack", Stack)
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
    with pytest.raises(Failed):
        main(["loadtest", "--start-stack", "--out", str(tmp_path / "out")])
    assert {sig: signal.getsignal(sig) for sig in before} == before
