"""The gateway service ships no client: the SDK, terminal UI and bots live in cardroom.client,
which talks to the gateway over gRPC only (it imports no service package)."""

from __future__ import annotations

import ast
from pathlib import Path

SERVICES = Path(__file__).resolve().parents[3] / "services"
SERVICE_PACKAGES = {"gateway", "dealer", "wallet", "evaluator", "connection_monitor", "tournament"}


def _imports(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_the_gateway_has_no_client_package_and_imports_none() -> None:
    assert not (SERVICES / "gateway" / "client").exists()
    for path in (SERVICES / "gateway").rglob("*.py"):
        assert not {n for n in _imports(path) if n.startswith("cardroom.client")}, path


def test_the_client_talks_to_no_service_package_directly() -> None:
    files = list((SERVICES / "cardroom" / "client").rglob("*.py"))
    assert {p.stem for p in files} >= {"bots", "connection", "terminal", "view", "policy", "stats"}
    for path in files:
        assert not {n.split(".")[0] for n in _imports(path)} & SERVICE_PACKAGES, path
