"""Properties over many simulated tournaments of every format (issue 11 'Property tests'):
chips in play constant (plus re-buys and add-ons), every table within one player of the others
after each balancing step, no seat shared, every entrant with a distinct place or a recorded
tie, payouts summing exactly to the pool; every cancellation pays out exactly the pool."""

import random

import pytest

from cardroom.core.engine import Variant
from cardroom.core.tournament import Format, Status, Tournament, tournament_config
from cardroom.core.tournament.events import Cancelled, Eliminated, Finished
from cardroom.core.tournament.simulation import SimulationOptions, simulate

GAMES = ("NT", "PO", "FT", "FO/8", "F7S", "F7S/8", "F5CD", "F2L3D", "FSK")
SIZES = {
    Format.MTT: 45,
    Format.SNG: 10,
    Format.HEADS_UP: 2,
    Format.REBUY: 30,
    Format.SHOOTOUT: 16,
    Format.SATELLITE: 40,
    Format.FREEROLL: 30,
}


def invariants(t: Tournament) -> None:
    assert t.chips_in_play() == t.chips_issued()
    if t.config.shootout is None and len(t.tables) > 1:
        counts = [t.occupied(x) for x in t.tables]
        assert max(counts) - min(counts) <= 1, counts
    seen: set[tuple[int, int]] = set()
    for tid, table in t.tables.items():
        for seat, state in table.seating.seats.items():
            assert (tid, seat) not in seen
            seen.add((tid, seat))
            e = t.entrants[state.player]
            assert (e.table, e.seat) == (tid, seat) and state.stack > 0
    active = [e for e in t.entrants.values() if e.status.value in ("active", "waiting", "finished")]
    assert len(active) == len(seen)


def final_checks(t: Tournament) -> None:
    assert t.status is Status.FINISHED
    (fin,) = [e for e in t.events if isinstance(e, Finished)]
    results = fin.results
    assert sorted(r.player for r in results) == sorted(t.entrants)
    covered: list[int] = []
    groups: dict[tuple[int, int], list[str]] = {}
    for r in results:
        groups.setdefault((r.place, r.last_place), []).append(r.player)
    for (first, last), players in groups.items():
        assert len(players) == last - first + 1  # a tie names exactly its places
        covered += range(first, last + 1)
    assert sorted(covered) == list(range(1, len(t.entrants) + 1))
    assert sum(r.prize for r in results) == t.prize_pool == fin.prize_pool
    out = [e for e in t.events if isinstance(e, Eliminated)]
    assert len(out) == len(t.entrants) - len([r for r in results if r.place == 1])


SLOW = (Format.MTT, Format.REBUY, Format.SHOOTOUT)


@pytest.mark.parametrize("fmt", [pytest.param(f, marks=pytest.mark.slow) if f in SLOW else f for f in Format])
def test_every_format_keeps_the_invariants_over_many_tournaments(fmt: Format) -> None:
    rng = random.Random(hash(fmt.value) % 1000)
    for k in range(6):
        code = GAMES[(k + len(fmt.value)) % len(GAMES)]
        entrants = SIZES[fmt] if fmt is Format.HEADS_UP else rng.randint(max(3, SIZES[fmt] // 2), SIZES[fmt])
        cfg = tournament_config(fmt, Variant.parse(code), entrants)
        t = simulate(cfg, entrants, random.Random(k), check=invariants)
        final_checks(t)


@pytest.mark.parametrize("fmt", [Format.MTT, Format.REBUY, Format.SATELLITE, Format.FREEROLL, Format.SHOOTOUT])
def test_every_cancellation_pays_exactly_the_pool(fmt: Format) -> None:
    cancelled = 0
    for k in range(8):
        entrants = 20 + 5 * k
        cfg = tournament_config(fmt, Variant.parse("NT"), entrants)
        t = simulate(cfg, entrants, random.Random(100 + k), options=SimulationOptions(cancel_at_round=1 + 3 * k))
        if t.status is Status.FINISHED:
            continue
        assert t.status is Status.CANCELLED and t.cancellation is not None
        cancelled += 1
        payout = t.cancellation
        assert sum(payout.awards.values()) + payout.house_kept == payout.distributed
        awarded = sum(
            e.placement.prizes(t.prize_table)[e.player]
            for e in t.entrants.values()
            if e.placement is not None and t.pool_final
        )
        if t.config.guarantee:
            assert payout.distributed == max(0, t.collected - awarded)
        else:
            assert payout.distributed + awarded == t.prize_pool
        remaining = {p for p, e in t.entrants.items() if e.status.value in ("active", "waiting")}
        assert set(payout.awards) <= remaining and set(payout.fees) == remaining
        assert all(v == t.config.fee for v in payout.fees.values())
        (event,) = [e for e in t.events if isinstance(e, Cancelled)]
        assert sum(v for _, v in event.payouts) == payout.distributed - payout.house_kept + sum(payout.fees.values())
    assert cancelled >= 4


@pytest.mark.slow
def test_a_thousand_entrant_freeze_out_finishes() -> None:
    cfg = tournament_config(Format.MTT, Variant.parse("NT"), 1000, late_registration_seconds=0.0)
    t = simulate(cfg, 1000, random.Random(1), check=invariants)
    final_checks(t)
    assert len(t.entrants) == 1000
