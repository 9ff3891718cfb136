"""Shuffle seeds, commitments and hand-record verification (the dealer's provable fairness)."""

from __future__ import annotations

import hashlib
import random

import pytest

from cardroom.core.cards import DECK
from cardroom.core.engine import ActionKind, Game, Stakes, Structure
from cardroom.core.engine.dealing import DeckSource
from cardroom.core.fairness import verify_text
from cardroom.core.shuffle import commitment, deck_from_seed, new_seed, reshuffle_seed
from cardroom.core.table import Table, TableSettings


def test_deck_is_a_deterministic_permutation_of_the_seed() -> None:
    seed = bytes(range(32))
    deck = deck_from_seed(seed)
    assert deck == deck_from_seed(seed)
    assert sorted(deck) == list(DECK)
    assert deck != deck_from_seed(bytes(range(1, 33)))
    assert deck_from_seed(new_seed()) != deck_from_seed(new_seed())
    assert commitment(seed) == hashlib.sha256(seed).hexdigest()
    assert reshuffle_seed(seed) == reshuffle_seed(seed) != reshuffle_seed(bytes(32))
    with pytest.raises(ValueError):
        deck_from_seed(b"short")


def test_first_card_is_uniform() -> None:
    """Chi-square over which card is dealt first, 10,400 fixed seeds (df 51, p < 0.001 cut-off)."""
    trials = 10_400
    counts = [0] * 52
    for i in range(trials):
        counts[deck_from_seed(i.to_bytes(16, "big")).__getitem__(0).index] += 1
    expected = trials / 52
    chi2 = sum((c - expected) ** 2 / expected for c in counts)
    assert chi2 < 87.0, chi2


def _record(game: Game, structure: Structure, stakes: Stakes, rng: random.Random) -> str:
    table = Table(TableSettings(game, structure, seat_count=6), stakes)
    for s in range(1, 5):
        table.sit_down(s, f"p{s}", 500)
    seed = new_seed()
    table.start_hand(DeckSource(deck_from_seed(seed), reshuffle_seed(seed)))  # type: ignore[arg-type]
    while table.in_hand:
        la = table.legal_actions()
        assert la is not None
        kind = rng.choice(sorted(la.kinds - {ActionKind.FOLD}, key=lambda k: k.value))
        amount = la.min_to if kind in (ActionKind.BET, ActionKind.RAISE, ActionKind.COMPLETE) else None
        discards = table.hand.hole_cards(la.seat)[: rng.randint(0, la.max_discards)] if kind is ActionKind.DRAW else ()
        table.act(la.seat, kind, amount, discards=discards)
    return table.finish().phh() + f'_seed = "{seed.hex()}"\n_commitment = "{commitment(seed)}"\n'


@pytest.mark.parametrize(
    "game,structure,stakes",
    [
        (Game.HOLDEM, Structure.NO_LIMIT, Stakes.blinds(1, 2)),
        (Game.OMAHA_HILO, Structure.POT_LIMIT, Stakes.blinds(1, 2)),
        (Game.STUD, Structure.FIXED_LIMIT, Stakes.for_stud(10)),
        (Game.TRIPLE_DRAW_27, Structure.FIXED_LIMIT, Stakes.limit(2)),
    ],
)
def test_records_verify_and_tampering_is_caught(game: Game, structure: Structure, stakes: Stakes) -> None:
    rng = random.Random(game.value)
    text = _record(game, structure, stakes, rng)
    [ok] = verify_text(text)
    assert ok.ok, ok.problems
    seed_line = next(line for line in text.splitlines() if line.startswith("_seed"))
    other = new_seed().hex()
    [bad_seed] = verify_text(text.replace(seed_line, f'_seed = "{other}"'))
    assert not bad_seed.ok
    assert any("commitment" in p for p in bad_seed.problems)
    [bad_commit] = verify_text(text.replace(commitment(bytes.fromhex(seed_line.split('"')[1])), "0" * 64))
    assert not bad_commit.ok
    dealt = next(line for line in text.splitlines() if line.startswith("actions"))
    first, second = _two_cards(dealt)
    tampered = text.replace(dealt, dealt.replace(first, "@@").replace(second, first).replace("@@", second))
    [bad_cards] = verify_text(tampered)
    assert not bad_cards.ok and any("deal" in p for p in bad_cards.problems), bad_cards


def _two_cards(actions_line: str) -> tuple[str, str]:
    """The first two hole cards dealt to different players in the actions line."""
    import re

    cards = re.findall(r'"d dh p(\d) ([2-9TJQKA][cdhs])', actions_line)
    first = cards[0]
    second = next(c for c in cards if c[0] != first[0])
    return first[1], second[1]


def test_records_without_seed_fail() -> None:
    [v] = verify_text('variant = "NT"\nactions = []\n')
    assert not v.ok and "no _seed" in v.problems[0]
    [v] = verify_text("not toml = = =")
    assert not v.ok


def test_a_record_with_an_artificial_all_in_verifies() -> None:
    """rules/003 'Artificial All-In': the redeal applies the engine's artificial all-in."""
    table = Table(TableSettings(Game.HOLDEM, Structure.FIXED_LIMIT, seat_count=6), Stakes.limit(4))
    for s in range(1, 4):
        table.sit_down(s, f"p{s}", 500)
    seed = new_seed()
    table.start_hand(DeckSource(deck_from_seed(seed), reshuffle_seed(seed)), now=0.0)  # type: ignore[arg-type]
    first = table.legal_actions()
    assert first is not None
    table.act(first.seat, ActionKind.RAISE, first.min_to, now=1.0)
    victim = table.legal_actions()
    assert victim is not None
    table.set_connected(victim.seat, False)
    table.tick(100.0)
    while table.in_hand:
        la = table.legal_actions()
        assert la is not None
        table.act(la.seat, ActionKind.CALL if ActionKind.CALL in la.kinds else ActionKind.CHECK, now=101.0)
    record = table.finish()
    assert record.artificial_all_in == (victim.seat,)
    [ok] = verify_text(record.phh() + f'_seed = "{seed.hex()}"\n_commitment = "{commitment(seed)}"\n')
    assert ok.ok, ok.problems
