"""The showdown audit waits for an evaluator that is restarting (issue 14 item 14: "the dealer's
channel to a restarted evaluator takes ~13 s to recover and showdown audits are silently skipped
meanwhile"). The real evaluator servicer runs in-process on a real port; the dealer's checker is
the one the dealer uses."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from cardroom.core.engine import ActionKind as A, Hand, Stakes
from cardroom.v1 import evaluator_pb2_grpc
from dealer import metrics
from dealer.showdown_check import ShowdownChecker
from evaluator.service import EvaluatorService
from tests.core.engine.helpers import make
from tests.ports import free_port


def _showdown_hand() -> Hand:
    hand = make(
        "NT", Stakes.blinds(1, 2), {1: 100, 2: 100}, button=2, holes={1: "Ah Ad", 2: "Kh Kd"}, board="2s 5h 9c Jd 3s"
    )
    hand.act(A.RAISE, 100)
    hand.call()
    assert hand.is_over
    return hand


async def _evaluator(port: int) -> grpc.aio.Server:
    server = grpc.aio.server()
    evaluator_pb2_grpc.add_EvaluatorServicer_to_server(EvaluatorService(workers=1), server)
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    return server


def _retries() -> float:
    return metrics.SHOWDOWN_RETRIES._value.get()  # type: ignore[attr-defined]


@pytest.fixture(autouse=True)
def _plaintext(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TLS_DIR", raising=False)


def test_an_audit_sent_while_the_evaluator_is_down_is_answered_once_it_is_back() -> None:
    async def run() -> tuple[str, float]:
        port = free_port()
        checker = ShowdownChecker(f"127.0.0.1:{port}", timeout=0.5, retry_seconds=30)
        before = _retries()
        audit = asyncio.create_task(checker.check(_showdown_hand(), "h-1"))
        await asyncio.sleep(1.5)  # the evaluator is down (restarting) meanwhile
        assert not audit.done()
        server = await _evaluator(port)
        try:
            outcome = await asyncio.wait_for(audit, 20)
        finally:
            await checker.close()
            await server.stop(None)
        return outcome, _retries() - before

    outcome, retries = asyncio.run(run())
    assert outcome == "match"
    assert retries >= 1


def test_an_evaluator_that_stays_down_is_counted_as_an_error_after_the_retry_period() -> None:
    async def run() -> str:
        checker = ShowdownChecker(f"127.0.0.1:{free_port()}", timeout=0.2, retry_seconds=1)
        try:
            return await asyncio.wait_for(checker.check(_showdown_hand(), "h-2"), 20)
        finally:
            await checker.close()

    assert asyncio.run(run()) == "error"
