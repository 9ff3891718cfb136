"""``cardroom loadtest --start-stack`` without ``--state-dir`` leaves nothing behind in the temp dir: the stack's
state (Kafka's log and the databases, some 110 MB a run) is removed at the end and the services' logs are kept
with the report (``OUT/stack-logs``), also when the stack failed to start. An explicit ``--state-dir`` is kept."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from cardroom.cli.main import main
from cardroom.client.loadtest.stack import RunStack


class Failed(Exception):
    pass


class HalfStartedStack(RunStack):
    """run.py wrote its state and a log, then the start failed (as when a service does not come up)."""

    def start(self, timeout: float = 300.0) -> RunStack:
        (self.state_dir / "kafka").mkdir(parents=True)
        (self.state_dir / "kafka" / "00000000.log").write_bytes(b"\0" * 1024)
        (self.state_dir / "log").mkdir()
        (self.state_dir / "log" / "gateway.log").write_text("gateway: listening\n")
        raise Failed


@pytest.fixture
def temp_root(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    monkeypatch.setattr("cardroom.client.loadtest.stack.RunStack", HalfStartedStack)
    return root


def test_the_run_s_own_state_dir_is_removed_and_its_logs_kept_with_the_report(temp_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    with pytest.raises(Failed):
        main(["loadtest", "--start-stack", "--out", str(out)])
    assert list(temp_root.iterdir()) == []  # no cardroom-loadtest-* left
    assert (out / "stack-logs" / "gateway.log").read_text() == "gateway: listening\n"


def test_an_explicit_state_dir_is_kept(temp_root: Path, tmp_path: Path) -> None:
    state, out = tmp_path / "state", tmp_path / "out"
    with pytest.raises(Failed):
        main(["loadtest", "--start-stack", "--state-dir", str(state), "--out", str(out)])
    assert (state / "log" / "gateway.log").exists() and (state / "kafka" / "00000000.log").exists()
    assert not (out / "stack-logs").exists()


def test_discard_without_logs_removes_the_state(tmp_path: Path) -> None:
    state = tmp_path / "state"
    (state / "wallet").mkdir(parents=True)
    assert RunStack(state).discard(keep_logs_in=tmp_path / "out" / "stack-logs") is None
    assert not state.exists() and not (tmp_path / "out").exists()
