"""The page names a tournament's tables as the dealer, the tournament service, the gateway and the
bots do (cardroom.core.ids.tournament_table_id): web/src/tournament/ids.ts, compiled by `npm run
build:fold`, gives the same table id for short ids and for ids long enough to need the digest
(its own SHA-256: crypto.subtle exists only in secure contexts)."""

from __future__ import annotations

import hashlib
import json
import subprocess

import pytest

from cardroom.core import ids
from tests.web.proxy import ROOT, build_web

pytestmark = pytest.mark.slow  # the web build (npm ci, buf, tsc) on a fresh checkout

WEB = ROOT / "web"
CASES = [
    ("sng-1", 1),
    ("web-sng-0a1b2c", 3),
    ("a" * 43, 2),  # 48 characters: no digest
    ("a" * 44, 2),
    ("x" * 48, 12),
    ("Sunday-Million_2026-12-06-main-event-day-1", 117),
]


def test_the_page_names_tournament_tables_as_the_services_do():
    build_web()
    built = subprocess.run(
        ["npm", "run", "--silent", "build:fold"], cwd=WEB, capture_output=True, text=True, timeout=300
    )
    assert built.returncode == 0, built.stdout + built.stderr
    script = (
        "import('./build/fold/tournament/ids.js').then((m) => console.log(JSON.stringify("
        f"{json.dumps(CASES)}.map(([t, n]) => m.tournamentTableId(t, n)))))"
    )
    result = subprocess.run(["node", "-e", script], cwd=WEB, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    got = json.loads(result.stdout)
    assert got == [ids.tournament_table_id(t, n) for t, n in CASES]
    assert (
        sum("-" + hashlib.sha256(t.encode()).hexdigest()[:10] in page for (t, _), page in zip(CASES, got, strict=True))
        >= 3
    )
