"""Fast tier: the garbage collector's pauses are a metric of every service, its start-up objects are
frozen once it is ready, and its thresholds are a setting (cardroom.runtime.collector)."""

from __future__ import annotations

import gc

import pytest
from prometheus_client import REGISTRY

from cardroom.runtime import collector


def _full_collections() -> float:
    return REGISTRY.get_sample_value("python_gc_pause_seconds_count", {"generation": "2"}) or 0.0


def test_every_collection_is_timed_by_generation() -> None:
    collector.time_pauses()
    collector.time_pauses()  # once per process: not twice in gc.callbacks
    assert sum(isinstance(cb, collector.PauseTimer) for cb in gc.callbacks) == 1
    before = _full_collections()
    gc.collect()
    assert _full_collections() == before + 1
    assert REGISTRY.get_sample_value("python_gc_pause_seconds_sum", {"generation": "2"}) > 0


def test_the_start_up_is_frozen_unless_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GC_FREEZE", "0")
    assert collector.freeze_start_up() == 0 and gc.get_freeze_count() == 0
    monkeypatch.delenv("GC_FREEZE")
    try:
        frozen = collector.freeze_start_up()
        assert frozen > 0 and gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


@pytest.mark.parametrize("raw", ["1,2", "a,b,c", "700,0,10", "700,10,10,1", "-1,10,10"])
def test_bad_thresholds_stop_the_service(monkeypatch: pytest.MonkeyPatch, raw: str) -> None:
    monkeypatch.setenv("GC_THRESHOLDS", raw)
    with pytest.raises(SystemExit, match="GC_THRESHOLDS"):
        collector.thresholds_from_env()


def test_thresholds_are_set_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_threshold()
    monkeypatch.delenv("GC_THRESHOLDS", raising=False)
    try:
        collector.set_thresholds()
        assert gc.get_threshold() == collector.THRESHOLDS == (30_000, 20, 20)  # unset: the services' own
        monkeypatch.setenv("GC_THRESHOLDS", " 20000,20,10 ")
        collector.set_thresholds()
        assert gc.get_threshold() == (20000, 20, 10)
        monkeypatch.setenv("GC_THRESHOLDS", "700,10,10")
        collector.set_thresholds()
        assert gc.get_threshold() == (700, 10, 10)  # Python's own, asked for
    finally:
        gc.set_threshold(*before)
