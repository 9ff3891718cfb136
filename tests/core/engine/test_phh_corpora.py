"""Real-world hand records (tests/data/phh: pokerkit's records, Pluribus, WSOP 2023) replay
to the record's own ``finishing_stacks`` and to what pokerkit 0.7.7 computes (issue 12)."""

from __future__ import annotations

import json
from pathlib import Path

import pokerkit as pk
import pytest

from cardroom.cli.main import main
from cardroom.core import phh
from cardroom.core.engine import HandMucked

from .helpers import last

DATA = Path(__file__).parents[2] / "data" / "phh"
REFUSED = {"antonius-blom-2009.phh": "fractional amount", "phua-xuan-2019.phh": "'NS'", "20.phh": "'FR'"}
RECORDS = sorted(p for p in DATA.rglob("*.phh") if p.name not in REFUSED)


def _pokerkit_stacks(path: Path) -> list[int]:
    with path.open("rb") as fp:
        state = last(pk.HandHistory.load(fp))
    assert state is not None and not state.status
    return [int(x) for x in state.stacks]


@pytest.mark.parametrize("path", RECORDS, ids=lambda p: str(p.relative_to(DATA)))
def test_real_records_replay_like_the_record_and_pokerkit(path: Path):
    replay = phh.loads(path.read_text(), source=str(path))
    assert replay.finishing_stacks == _pokerkit_stacks(path)
    assert replay.agrees in (True, None)
    assert sum(replay.finishing_stacks) == sum(replay.hand.starting_stacks)


def test_the_corpus_covers_the_cases_of_the_issue():
    texts = {p.name: p.read_text() for p in RECORDS}
    assert any("ante_trimming_status = false" in t for t in texts.values())  # big-blind antes
    assert any("F7S" in t and "??" in t for t in texts.values())  # unknown Stud up-cards
    assert any("sd Kh??" in t for t in texts.values())  # an unknown discard
    assert sum("finishing_stacks" in t for t in texts.values()) >= 4  # Pluribus
    assert len({phh.loads(t).hand.variant.code for t in texts.values()}) >= 6


def test_a_muck_at_the_showdown_with_unknown_cards_loses():
    """rules/000 'Showdown': "anyone else can fold" — ``p2 sm`` with unknown cards mucks."""
    replay = phh.loads((DATA / "pokerkit" / "wsop-2023-43-5" / "60.phh").read_text())
    mucked = [e for e in replay.hand.events if isinstance(e, HandMucked)]
    assert [e.seat for e in mucked] == [2]
    assert replay.hand.results()[2] < 0


@pytest.mark.parametrize(("name", "message"), sorted(REFUSED.items()))
def test_records_outside_the_house_rules_are_refused_clearly(name: str, message: str):
    path = next(DATA.rglob(name))
    with pytest.raises(phh.PHHError, match=message) as err:
        phh.loads(path.read_text(), source=str(path))
    assert err.value.file == str(path) and str(err.value).startswith(str(path))


def test_bad_action_is_a_phh_error_with_file_and_action_index():
    text = (DATA / "pokerkit" / "pluribus" / "100-0.phh").read_text().replace("'p4 cbr 210'", "'p4 cbr 20'")
    with pytest.raises(phh.PHHError) as err:
        phh.loads(text, source="bad.phh")
    assert err.value.action_index == 7 and err.value.file == "bad.phh"
    assert "minimum" in str(err.value)


def test_cli_replays_the_corpus(capsys):
    status = main(["phh", "replay", *map(str, RECORDS)])
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert status == 0 and len(lines) == len(RECORDS)
    assert all("error" not in x and x["agrees"] in (True, None) for x in lines)
    status = main(["phh", "replay", str(next(DATA.rglob("antonius-blom-2009.phh")))])
    assert status == 1 and "fractional" in capsys.readouterr().out


def test_straddle_record_acts_left_of_the_straddler_like_pokerkit():
    text = (
        "variant = 'NT'\nante_trimming_status = true\nantes = [0, 0, 0, 0, 0]\n"
        "blinds_or_straddles = [1, 2, 4, 0, 0]\nmin_bet = 2\nstarting_stacks = [100, 100, 100, 100, 100]\n"
        "actions = ['d dh p1 AsAd', 'd dh p2 KsKd', 'd dh p3 QsQd', 'd dh p4 2c3d', 'd dh p5 4h5h', "
        "'p4 cbr 12', 'p5 f', 'p1 cc', 'p2 f', 'p3 cc', 'd db 7c8d9h', 'p1 cc', 'p3 cc', 'p4 cc', "
        "'d db Tc', 'p1 cc', 'p3 cc', 'p4 cc', 'd db 2s', 'p1 cc', 'p3 cc', 'p4 cc', "
        "'p1 sm AsAd', 'p3 sm QsQd', 'p4 sm 2c3d']\n"
    )
    replay = phh.loads(text)
    state = last(pk.HandHistory.loads(text))
    assert replay.finishing_stacks == list(state.stacks)
    assert replay.hand.results()[1] == 38 - 12  # 12 each from p1, p3, p4 and the big blind's 2


def test_unknown_stud_up_card_the_records_bring_in_decides():
    """A Stud record whose up-cards are unknown ('??'): the record's own ``pb`` actor brings in."""
    text = (
        "variant = 'F7S'\nante_trimming_status = true\nantes = [1, 1, 1]\nbring_in = 2\nsmall_bet = 10\n"
        "big_bet = 20\nstarting_stacks = [100, 100, 100]\n"
        "actions = ['d dh p1 ????', 'd dh p2 AsAd', 'd dh p3 ????', 'd dh p1 ??', 'd dh p2 Ah', 'd dh p3 ??', "
        "'p3 pb', 'p1 f', 'p2 cbr 10', 'p3 f']\n"
    )
    replay = phh.loads(text)
    assert replay.hand.results() == {1: -1, 2: 4, 3: -3}


def test_negative_or_fractional_amounts_are_refused_clearly():
    base = (DATA / "pokerkit" / "pluribus" / "100-0.phh").read_text()
    with pytest.raises(phh.PHHError, match="negative amount"):
        phh.loads(base.replace("[50, 100, 0,", "[50, -100, 0,"), source="neg.phh")
    with pytest.raises(phh.PHHError, match="fractional amount 10000.5"):
        phh.loads(base.replace("[10000, 10000,", "[10000.5, 10000,"), source="half.phh")
    assert phh.loads(base.replace("[10000, 10000,", "[10000.0, 10000,")).agrees is True
