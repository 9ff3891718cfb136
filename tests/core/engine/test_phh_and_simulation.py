"""PHH export/replay round trips and random-play invariants (chip conservation, determinism)."""

from __future__ import annotations

import random
import tomllib

import pytest

from cardroom.core import phh
from cardroom.core.cards import DECK
from cardroom.core.engine import ForcedBet, ForcedKind, Hand, HandEnded, Options, PotAwarded, SeatIn, Stakes, Variant
from cardroom.core.engine.simulation import random_hand

ALL_CODES = [
    "NT",
    "FT",
    "PT",
    "HT",
    "ST",
    "NO",
    "PO",
    "FO",
    "FO/8",
    "PO/8",
    "F7S",
    "F7S/8",
    "P7S",
    "F5CD",
    "N5CD",
    "F2L3D",
    "FSK",
    "PSK",
]


@pytest.mark.parametrize("code", ALL_CODES)
def test_random_hands_conserve_chips(code):
    """Chip conservation on every simulated hand: what the winners get is what was put in,
    less the rake; stacks never go negative; every hand ends."""
    variant = Variant.parse(code)
    rng = random.Random(code)
    for _ in range(150):
        players = rng.randint(2, variant.spec.max_players)
        hand = random_hand(variant, players, rng, options=Options(), stakes=None)
        assert hand.is_over
        assert sum(hand.results().values()) == -hand.rake_taken == 0
        assert all(s >= 0 for s in hand.stacks)
        paid = sum(a for e in hand.events if isinstance(e, PotAwarded) for a in (e.amount,))
        assert paid == sum(hand.committed)
        assert isinstance(hand.events[-1], HandEnded)


@pytest.mark.parametrize("code", ALL_CODES)
def test_our_phh_replays_to_the_same_hand(code):
    """Every hand exports to PHH and replays through the engine to the same finishing stacks
    and the same PHH text."""
    variant = Variant.parse(code)
    rng = random.Random(f"phh-{code}")
    for _ in range(60):
        hand = random_hand(variant, rng.randint(2, variant.spec.max_players), rng)
        text = phh.dumps(hand)
        replay = phh.loads(text)
        assert replay.finishing_stacks == hand.stacks
        assert phh.dumps(replay.hand) == text
        fields = tomllib.loads(text)
        assert fields["finishing_stacks"] == hand.stacks
        extensions = set(fields) - {
            "variant",
            "ante_trimming_status",
            "antes",
            "blinds_or_straddles",
            "bring_in",
            "small_bet",
            "big_bet",
            "min_bet",
            "starting_stacks",
            "actions",
            "players",
            "seats",
            "finishing_stacks",
        }
        assert extensions and all(k.startswith("_") for k in extensions)


def test_same_seed_gives_the_same_hands():
    """Determinism: the deck order and the reshuffle seed are inputs."""
    v = Variant.parse("F2L3D")
    a = [phh.dumps(random_hand(v, 6, random.Random(5))) for _ in range(3)]
    b = [phh.dumps(random_hand(v, 6, random.Random(5))) for _ in range(3)]
    assert a == b


def test_dead_blinds_and_dead_button_round_trip_through_phh():
    """Missed blinds (dead small blind) and a dead button survive export and replay."""
    forced = [
        ForcedBet(3, ForcedKind.SMALL_BLIND, 1),
        ForcedBet(5, ForcedKind.BIG_BLIND, 2),
        ForcedBet(1, ForcedKind.BIG_BLIND, 2),
        ForcedBet(1, ForcedKind.DEAD_BLIND, 1),
    ]
    deck = list(DECK)
    random.Random(3).shuffle(deck)
    seats = [SeatIn(1, "ann", 100), SeatIn(3, "bob", 100), SeatIn(5, "cy", 100)]
    h = Hand(Variant.parse("NT"), Stakes.blinds(1, 2), seats, 2, deck, forced)
    while not h.is_over:
        h.check_or_call()
    text = phh.dumps(h)
    f = tomllib.loads(text)
    assert f["_button_seat"] == 2 and f["_dead_blinds"] == [0, 0, 1]
    assert f["seats"] == [3, 5, 1]
    assert phh.loads(text).finishing_stacks == h.stacks


def test_unknown_variant_is_a_phh_error():
    with pytest.raises(phh.PHHError):
        phh.loads("variant = 'XX'\nantes = [0, 0]\nstarting_stacks = [1, 1]\nactions = []\n")


def test_unknown_hole_cards_replay_unless_they_reach_the_showdown():
    """Real-world PHH files hide folded hands as '????'; they replay, a showdown needs cards."""
    head = (
        "variant = 'NT'\nantes = [0, 0, 0]\nblinds_or_straddles = [1, 2, 0]\nmin_bet = 2\n"
        "starting_stacks = [100, 100, 100]\n"
    )
    folded = head + "actions = ['d dh p1 ????', 'd dh p2 ????', 'd dh p3 AsAd', 'p3 cbr 6', 'p1 f', 'p2 f']\n"
    assert phh.loads(folded).finishing_stacks == [99, 98, 103]
    shown = head + (
        "actions = ['d dh p1 ????', 'd dh p2 KsKd', 'd dh p3 AsAd', 'p3 cc', 'p1 cc', 'p2 cc', "
        "'d db 2c3d9h', 'p1 cc', 'p2 cc', 'p3 cc', 'd db Th', 'p1 cc', 'p2 cc', 'p3 cc', "
        "'d db Jc', 'p1 cc', 'p2 cc', 'p3 cc']\n"
    )
    with pytest.raises(phh.PHHError):
        phh.loads(shown)
