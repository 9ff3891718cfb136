"""make test's work units (tests/scheduling.py): files stay whole, the card-room tests are one unit."""

from __future__ import annotations

from pathlib import Path

from tests.scheduling import STACK_PATHS, STACKS, work_unit

ROOT = Path(__file__).resolve().parents[2]


def test_every_stack_path_exists():
    for path in STACK_PATHS:
        assert (ROOT / path).is_dir() if path.endswith("/") else (ROOT / path).is_file(), path


def test_a_file_is_one_unit_and_the_card_room_files_are_one_together():
    assert (
        work_unit("tests/core/engine/test_betting.py::test_blinds_are_live_bets") == "tests/core/engine/test_betting.py"
    )
    assert work_unit("tests/core/engine/test_pokerkit_differential.py::test_x[F7S/8]") == (
        "tests/core/engine/test_pokerkit_differential.py"
    )
    assert work_unit("tests/e2e/test_bots_cli.py::test_bots_until_interrupted") == STACKS
    assert work_unit("tests/infra/test_make_run.py::test_make_run_prints") == STACKS
    assert work_unit("tests/infra/test_k8s.py::test_every_pod_is_hardened[base]") == "tests/infra/test_k8s.py"
    assert work_unit("tests/web/test_web_build.py::test_it_builds") == "tests/web/test_web_build.py"
