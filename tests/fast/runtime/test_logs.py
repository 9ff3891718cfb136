"""Structured logs (cardroom.runtime.logs): a kafka-python client closed while its metadata request is in
flight is not logged as an ERROR (the 30-entrant tournament test found the restarted dealer's restore
reader logging one, and rightly fails on any ERROR line); any other kafka-python error still is."""

from __future__ import annotations

import io
import json
import logging

import pytest

from cardroom.runtime import logs


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch):
    stream = io.StringIO()
    monkeypatch.setattr(logs.sys, "stderr", stream)
    root = logging.getLogger()
    saved = (root.handlers[:], root.level)
    logs.setup_logging("dealer")
    yield stream
    root.handlers[:], root.level = saved[0], saved[1]


def test_a_client_closed_mid_metadata_request_is_not_an_error_but_other_kafka_errors_are(captured) -> None:
    cluster = logging.getLogger("kafka.cluster")
    cluster.error("Metadata refresh: failed %s", "Cancelled")
    cluster.error("Metadata refresh: failed %s", "KafkaConnectionError: 111 ECONNREFUSED")
    lines = [json.loads(line) for line in captured.getvalue().splitlines()]
    assert [(r["level"], r["message"]) for r in lines] == [
        ("ERROR", "Metadata refresh: failed KafkaConnectionError: 111 ECONNREFUSED")
    ]
