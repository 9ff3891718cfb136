"""External tools of the operations tests, installed by scripts/install-tools.sh when missing (as
tests/services/pg.py installs PostgreSQL). Outside CI a tool that cannot be installed (no root, no
network) skips its tests with the reason; in CI (CI=true) it fails them, so nothing is skipped there."""

from __future__ import annotations

import os
import shutil
import subprocess
from functools import cache

import pytest

from tests.infra.repo import ROOT

INSTALL = ROOT / "scripts" / "install-tools.sh"


def _unavailable(what: str, detail: str) -> None:
    message = f"{what} is not available and scripts/install-tools.sh could not install it: {detail}"
    if os.environ.get("CI") == "true":
        pytest.fail(message)
    pytest.skip(message)


@cache
def _install(tool: str) -> str:
    result = subprocess.run(["bash", str(INSTALL), tool], check=False, capture_output=True, text=True)
    return "" if result.returncode == 0 else (result.stderr.strip() or f"exit status {result.returncode}")


def kustomize_command() -> list[str]:
    """``kubectl kustomize`` (kubectl's built-in kustomize) or a standalone ``kustomize build``."""
    problem = _install("kustomize")
    if shutil.which("kubectl"):
        return ["kubectl", "kustomize"]
    for candidate in (shutil.which("kustomize"), str(ROOT / ".cache" / "bin" / "kustomize")):
        if candidate and os.access(candidate, os.X_OK):
            return [candidate, "build"]
    _unavailable("kustomize", problem or "not found after the install")
    raise AssertionError("unreachable")


def prometheus_binaries() -> tuple[str, str]:
    """(prometheus, promtool), from Debian's package."""
    problem = _install("prometheus")
    prometheus, promtool = shutil.which("prometheus"), shutil.which("promtool")
    if not (prometheus and promtool):
        _unavailable("prometheus/promtool", problem or "not found after the install")
    assert prometheus and promtool
    return prometheus, promtool
