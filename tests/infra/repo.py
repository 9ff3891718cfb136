"""What the deployment files may name in this repository: runnable modules, services, their ports.

Shared by the compose, Kubernetes and monitoring tests so "does ``python -m NAME`` exist" has one
answer: a module file ``services/a/b.py`` or a package with a ``__main__.py``.
"""

from __future__ import annotations

from pathlib import Path

from cardroom.runtime.config import DEFAULT_PORTS

ROOT = Path(__file__).resolve().parents[2]
SERVICES = ROOT / "services"


def module_runs(module: str) -> bool:
    """True when ``python -m module`` would find something to run in ``services/``."""
    base = SERVICES.joinpath(*module.split("."))
    return base.with_suffix(".py").is_file() or (base / "__main__.py").is_file()


def runnable_services() -> dict[str, tuple[int, int]]:
    """The services that exist as ``python -m NAME`` today, with their default (gRPC, metrics) ports."""
    return {name: ports for name, ports in DEFAULT_PORTS.items() if module_runs(name)}


def python_m_targets(command: list[str]) -> list[str]:
    """The module of every ``python -m MODULE`` in an argv-style command."""
    return [command[i + 1] for i, arg in enumerate(command[:-1]) if arg == "-m" and "python" in command[0]]


def writes_data(service: str) -> bool:
    """True when the service keeps files under its ``DATA_DIR`` (its config reads ``data_dir``)."""
    return any("data_dir" in path.read_text() for path in (SERVICES / service).glob("*.py"))
