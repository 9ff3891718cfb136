"""Differential tests against pokerkit 0.7.7 through PHH, in both directions (issue 4).

Identical finishing stacks on every hand, under pokerkit-compatible settings
(``phh.POKERKIT_OPTIONS``: odd chips all to the first winner with pokerkit's pot merging,
no fold when checking is free, no Stud double bet, big blind not counted toward the cap).
The odd-chip difference itself is tested explicitly in test_showdown.py.

Hands per variant and direction: ``CARDROOM_DIFF_HANDS`` (default 4,000, about 3-4 minutes
for all 14 tests, to fit the suite's time budget; set it to
10000 for the issue's full bar — 22 minutes on this shared 2-core machine under load).

Hi/Lo hands hit by pokerkit's side-pot low bug (``pokerkit_hilo_side_pot_bug``: it splits the
low half of a side pot nobody in it qualifies for) are counted, not compared; they must stay
rare (< 2%), and test_showdown.py pins one down explicitly.

Known pokerkit 0.7.7 quirks worked around in the generator (see pokerkit_diff.py): its
``FO/8`` class bets pot-limit, so pokerkit's own random FO/8 hands bet the minimum and stop at
4 bets; a short all-in bring-in is a "completion" for pokerkit, so Stud stacks cover the ante
and the bring-in.
"""

from __future__ import annotations

import os

import pytest

from .pokerkit_diff import SHARED, ours_to_pokerkit, pokerkit_to_ours

def _hands(code: str) -> int:
    env = os.environ.get("CARDROOM_DIFF_HANDS")
    if env:
        return int(env)
    return 4000


pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]


@pytest.mark.parametrize("code", list(SHARED))
def test_our_phh_replayed_by_pokerkit_gives_identical_finishing_stacks(code):
    known: list[str] = []
    bad = ours_to_pokerkit(code, _hands(code), seed=20261130, known=known)
    assert not bad, f"{len(bad)} mismatches; first:\n{bad[0]}"
    assert len(known) <= _hands(code) // 50


@pytest.mark.parametrize("code", list(SHARED))
def test_pokerkit_phh_replayed_by_us_gives_identical_finishing_stacks(code):
    known: list[str] = []
    bad = pokerkit_to_ours(code, _hands(code), seed=20261130, known=known)
    assert not bad, f"{len(bad)} mismatches; first:\n{bad[0]}"
    assert len(known) <= _hands(code) // 50
