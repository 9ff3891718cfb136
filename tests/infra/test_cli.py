"""The ``cardroom`` console command installed in the project's virtual environment (issue 2)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import cardroom
from cardroom.cli.main import main

CARDROOM = Path(sys.executable).with_name("cardroom")


def test_console_script_help_lists_the_subcommands():
    result = subprocess.run([str(CARDROOM), "--help"], capture_output=True, text=True, check=True)
    for command in ("version", "bench", "eval", "simulate", "phh"):
        assert f"    {command}" in result.stdout, result.stdout


def test_version_prints_the_package_version():
    result = subprocess.run([str(CARDROOM), "version"], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == f"cardroom {cardroom.__version__}"


def test_no_subcommand_prints_help_and_exits_2(capsys):
    assert main([]) == 2
    assert "usage: cardroom" in capsys.readouterr().out


def test_unknown_benchmark_is_refused_with_status_2(capsys):
    assert main(["bench", "no-such-bench"]) == 2
    assert "unknown benchmark" in capsys.readouterr().out
