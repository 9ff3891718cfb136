"""Where the harness's own temp dirs go (a service's data and log, the test PKI, Envoy's config): under pytest's
base temp once a session has begun (pytest keeps the last three sessions' and removes older ones), not loose in
the system's temp dir, where every run of the suite left some 300 of them. Outside pytest: the system's."""

from __future__ import annotations

import tempfile
from pathlib import Path

_BASE: list[Path] = []


def use_base(path: Path) -> None:
    """Make the harness's temp dirs in ``path`` from now on (the session's fixture calls it)."""
    path.mkdir(parents=True, exist_ok=True)
    _BASE[:] = [path]


def make(prefix: str) -> Path:
    """A new temp dir named ``prefix…``."""
    return Path(tempfile.mkdtemp(prefix=prefix, dir=_BASE[0] if _BASE else None))
