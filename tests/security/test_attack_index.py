"""docs/security.md lists every attack of issue 14 with the tests that perform it. Each test it names
must exist, so the list cannot silently point at a test that was renamed or removed."""

from __future__ import annotations

import ast
import re

from tests.infra.repo import ROOT

SECURITY = ROOT / "docs" / "security.md"
NODE = re.compile(r"`(tests/[\w/]+\.py)::(test_\w+)`")


def _index_rows() -> list[str]:
    text = SECURITY.read_text()
    section = text.split("## Every attack of issue 14", 1)[1].split("\n## ", 1)[0]
    return [line for line in section.splitlines() if line.startswith("| ") and "::" in line]


def _tests_in(path: str) -> set[str]:
    tree = ast.parse((ROOT / path).read_text())
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def test_every_attack_names_tests_that_exist() -> None:
    rows = _index_rows()
    assert len(rows) >= 15, "the attack index lost its rows"
    for row in rows:
        nodes = NODE.findall(row)
        assert nodes, f"no test named in: {row[:100]}"
        for path, name in nodes:
            assert (ROOT / path).is_file(), f"{path} does not exist"
            assert name in _tests_in(path), f"{path} has no {name}"
