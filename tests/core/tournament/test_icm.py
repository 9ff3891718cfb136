"""ICM (Malmuth-Harville) equity: checked against brute force over finishing orders."""

import itertools
import random

import pytest

from cardroom.core.tournament.icm import icm_equity


def harville_brute_force(stacks: dict[str, int], prizes: list[int]) -> dict[str, float]:
    live = [p for p, c in stacks.items() if c > 0]
    out = {p: 0.0 for p in stacks}
    for order in itertools.permutations(live):
        prob, rest = 1.0, float(sum(stacks[p] for p in live))
        for p in order:
            prob *= stacks[p] / rest
            rest -= stacks[p]
        for place, p in enumerate(order[: len(prizes)]):
            out[p] += prob * prizes[place]
    return out


def test_heads_up_equity_is_proportional_to_chips() -> None:
    eq = icm_equity({"a": 3000, "b": 1000}, [700, 300])
    assert eq["a"] == pytest.approx(0.75 * 700 + 0.25 * 300)
    assert eq["b"] == pytest.approx(0.25 * 700 + 0.75 * 300)


def test_icm_matches_harville_by_brute_force() -> None:
    rng = random.Random(5)
    for _ in range(60):
        n = rng.randint(1, 6)
        stacks = {f"p{i}": rng.choice([0, rng.randint(1, 5000)]) for i in range(n)}
        prizes = sorted((rng.randint(0, 1000) for _ in range(rng.randint(1, 5))), reverse=True)
        got = icm_equity(stacks, prizes)
        want = harville_brute_force(stacks, prizes)
        for p in stacks:
            assert got[p] == pytest.approx(want[p])
        live = sum(1 for c in stacks.values() if c > 0)
        assert sum(got.values()) == pytest.approx(sum(prizes[:live]))


def test_icm_handles_a_big_field_with_few_paid_places() -> None:
    stacks = {f"p{i}": 1000 for i in range(200)}
    eq = icm_equity(stacks, [5000, 3000, 2000])
    assert all(v == pytest.approx(50.0) for v in eq.values())


def test_the_tournament_shows_icm_equity_of_the_remaining_stacks() -> None:
    """Issue 11: ICM 'for the lobby and as a checked extra, not a deal mechanism'."""
    from tests.core.tournament.helpers import started

    t = started(5, late_registration_seconds=0.0)
    eq = t.icm()
    assert set(eq) == set(t.entrants) and sum(eq.values()) == pytest.approx(t.prize_pool)
    assert all(v == pytest.approx(t.prize_pool / 5) for v in eq.values())  # equal stacks
