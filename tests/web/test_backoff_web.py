"""The web client's reconnection waits are jittered by the Python clients' rule (web/src/backoff.ts,
services/cardroom/client/backoff.py): before, every page dropped by one gateway restart waited exactly
1, 2 … 5 s and came back in the same instant, attempt after attempt."""

from __future__ import annotations

import json
import subprocess

import pytest

from cardroom.client.backoff import HIGH, LOW
from tests.web.proxy import ROOT, build_web

pytestmark = pytest.mark.slow  # the web build (npm ci, buf, tsc) on a fresh checkout

WEB = ROOT / "web"

SCRIPT = """
import { HIGH, LOW, reconnectDelayMs } from "./build/fold/backoff.js";
const at = (share) => () => share;
const attempts = [0, 1, 2, 3, 4, 5, 9, 1000];
process.stdout.write(JSON.stringify({
  bounds: [LOW, HIGH],
  nominal: attempts.map((a) => reconnectDelayMs(a, at(0.5))),
  shortest: attempts.map((a) => reconnectDelayMs(a, at(0))),
  longest: attempts.map((a) => reconnectDelayMs(a, at(1))),
  firsts: Array.from({ length: 1000 }, () => reconnectDelayMs(0)),
}));
"""


@pytest.fixture(scope="module")
def waits() -> dict[str, list[float]]:
    build_web()
    done = subprocess.run(
        ["npm", "run", "--silent", "build:fold"], cwd=WEB, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    ran = subprocess.run(
        ["node", "--input-type=module", "-e", SCRIPT], cwd=WEB, capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    result: dict[str, list[float]] = json.loads(ran.stdout)
    return result


def test_the_page_waits_as_the_python_clients_do(waits: dict[str, list[float]]) -> None:
    assert waits["bounds"] == [LOW, HIGH]
    assert waits["nominal"] == [1000, 2000, 3000, 4000, 5000, 5000, 5000, 5000]
    assert waits["shortest"] == [LOW * n for n in waits["nominal"]]
    assert waits["longest"] == [HIGH * n for n in waits["nominal"]]


def test_pages_dropped_together_come_back_spread_over_a_second(waits: dict[str, list[float]]) -> None:
    firsts = waits["firsts"]  # a thousand pages' first waits, Math.random's draws
    assert len(set(firsts)) == 1000
    assert min(firsts) >= 500 and max(firsts) <= 1500
    assert min(firsts) < 520 and max(firsts) > 1480
