"""How `make test` shares the suite between its pytest-xdist workers (``--dist loadfile``).

Every test file is one work unit, so its module fixtures and fixed ports stay on one worker, except
the files that run a whole card room (every service a process, with bots, Envoy or Prometheus beside
them): those are one unit together, queued first, so one worker plays them one after another while
the other works through the rest. On a 2-core machine two card rooms at once (each a dozen processes
and a broker's worth of topics) starved each other's brokers until they fenced themselves, and
xdist's default order (the files with the most tests first) had left these long, few-test files to
the end of the run, all at once.

The scheduler sees only node ids, so the stack files are named here by path (the one list); their
tests get the ``stack`` marker (``-m "not stack"`` leaves them out).
"""

from __future__ import annotations

from typing import Any

import pytest

#: Files (or folders, ending in "/") whose tests run a whole card room.
STACK_PATHS = (
    "tests/e2e/",
    "tests/security/test_grpc_trust.py",
    "tests/web/test_web_client.py",
    "tests/web/test_web_table.py",
    "tests/web/test_web_tournament.py",
    "tests/web/test_web_make_run.py",
    "tests/infra/test_live_prometheus.py",
    "tests/infra/test_make_run.py",
)
STACKS = "stacks"
#: Fixtures that start a whole card room: a test using one outside STACK_PATHS is an error.
STACK_FIXTURES = frozenset({"cardroom", "web_stack", "tournament_room"})


def work_unit(nodeid: str) -> str:
    """The unit a test is scheduled with: its file, or :data:`STACKS`."""
    path = nodeid.split("::", 1)[0]
    return STACKS if path.startswith(STACK_PATHS) else path


def mark_and_order(items: list[pytest.Item]) -> None:
    """The ``stack`` marker on the stack tests, and those first (stable: the rest as collected)."""
    for item in items:
        if work_unit(item.nodeid) == STACKS:
            item.add_marker(pytest.mark.stack)
        elif not STACK_FIXTURES.isdisjoint(getattr(item, "fixturenames", ())):
            raise pytest.UsageError(
                f"{item.nodeid} runs a whole card room ({', '.join(STACK_FIXTURES & set(item.fixturenames))}): "
                "add its file to tests/scheduling.py STACK_PATHS"
            )
    items.sort(key=lambda item: work_unit(item.nodeid) != STACKS)


def scheduler(config: pytest.Config, log: Any) -> Any:
    """xdist's file scheduling with the stack files as one unit, in collection order."""
    from xdist.scheduler import LoadScopeScheduling

    class StacksFirst(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return StacksFirst(config, log)
