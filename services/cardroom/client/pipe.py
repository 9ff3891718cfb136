"""A closed pipe (``cardroom play | head``) ends the command quietly."""

from __future__ import annotations

import os
import sys


def quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush does not complain again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
