"""The load generator's collector in the steady state (gcpause.Held): off, so its young collections
(13–19 stops a minute of up to 60–140 ms, freeing nothing: docs/capacity.md) are not read as the card room's
latency; a valve bounds what a run that makes cyclic garbage can grow by; at the end one collection
says what was left."""

from __future__ import annotations

import gc

from cardroom.client.loadtest.gcpause import Held


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_held_turns_the_collector_off_and_release_collects_once_and_turns_it_on() -> None:
    assert gc.isenabled()
    held = Held()
    held.hold()
    try:
        assert not gc.isenabled()
        for _ in range(100):
            Cycle()  # cyclic garbage: only a collection frees it
        assert not held.valve()  # far below the valve
    finally:
        freed, ms = held.release()
    assert gc.isenabled()
    assert freed >= 100 and ms >= 0.0
    assert held.release() == (0, 0.0)  # not held any more: nothing to do


def test_the_valve_collects_once_enough_objects_were_made() -> None:
    held = Held(valve_objects=500)
    held.hold()
    try:
        keep = [Cycle() for _ in range(600)]  # made, not freed: the count passes the valve
        assert gc.get_count()[0] >= 500
        assert held.valve()
        assert held.valves == 1
        assert gc.get_count()[0] < 500  # the collection reset it
        assert not held.valve()
        assert not gc.isenabled()  # still held after the valve
        del keep
    finally:
        held.release()
    assert gc.isenabled()
