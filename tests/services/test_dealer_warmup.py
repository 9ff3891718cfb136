"""Issue 10, 'First showdown after a restart stalls every table': the evaluator tables are
built before the dealer reports SERVING, not on the event loop at the first showdown."""

from __future__ import annotations

import subprocess
import sys

from tests.services.procs import ROOT, ServiceProcess


def test_health_serving_implies_the_evaluator_tables_are_loaded() -> None:
    dealer = ServiceProcess(
        "dealer",
        {
            "KAFKA_BOOTSTRAP": "none",
            "EVALUATOR_ADDR": "none",
            "CONNECTION_MONITOR_ADDR": "none",
            "WALLET_ADDR": "127.0.0.1:1",
        },
    )
    dealer.start()  # returns once health says SERVING
    try:
        messages = [r.get("message") for r in dealer.log_records()]
        assert "evaluator tables loaded" in messages, messages
        assert "serving" in messages
        assert messages.index("evaluator tables loaded") < messages.index("serving")
    finally:
        dealer.stop()


def test_warm_evaluator_builds_every_lazily_built_table_the_engine_uses() -> None:
    """In a fresh interpreter: importing the dealer imports the evaluator (the engine's imports are
    at module level) but leaves its lazily built 6-card table unbuilt — the first showdown would
    build it on the event loop; the warm-up builds it."""
    script = (
        "import dealer.server, dealer.warmup\n"
        "from cardroom.core.evaluation import fast\n"
        "before = fast._T6 is not None\n"
        "dealer.warmup.warm_evaluator()\n"
        "print(before, fast._T6 is not None)\n"
    )
    out = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False True"
