"""``cardroom history export --topic``: the dealer's hand records read from the real Kafka
broker (tests/kafka_broker.py), exported as PokerStars text that pokerkit's parser reads."""

from __future__ import annotations

import uuid
import warnings

import pokerkit as pk
import pytest
from kafka import KafkaAdminClient
from kafka.admin import NewTopic

from cardroom.cli.main import main
from cardroom.core import phh
from cardroom.core.table.session import run_session
from cardroom.runtime.events import EventProducer
from cardroom.v1 import dealer_pb2

pytestmark = pytest.mark.kafka


def test_history_export_reads_the_hand_records_topic(kafka, capsys):
    topic = f"test.hand.records.{uuid.uuid4().hex[:8]}"
    texts: list[str] = []

    def publish(record, gap):
        # the dealer's record: HandRecord.phh with its own fields (services/dealer/settlement.py)
        texts.append(record.phh(_hand_id=f"h{record.number}", _table_id="t1", _seed="00", _commitment="c"))

    run_session("NT", 4, 12, seed=5, on_hand=publish)
    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    try:
        admin.create_topics([NewTopic(topic, 2, 1)], timeout_ms=30_000)
    finally:
        admin.close()
    producer = EventProducer(kafka.bootstrap, "test")
    try:
        for k, text in enumerate(texts, 1):
            producer.publish(
                topic,
                type="cardroom.dealer.hand_record.v1",
                key="t1",
                sequence=k,
                payload=dealer_pb2.HandRecordPublished(hand_id=f"h{k}", table_id="t1", hand_number=k, phh=text),
            )
    finally:
        producer.close()
    assert main(["history", "export", "--topic", topic, "--bootstrap", kafka.bootstrap]) == 0
    out = capsys.readouterr().out
    assert out.count("PokerStars Hand #") == len(texts)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        parsed = list(pk.PokerStarsParser()(out, error_status=True))
    assert len(parsed) == len(texts)
    for hh, text in zip(parsed, texts, strict=True):
        assert list(hh.starting_stacks) == phh.loads(text).hand.starting_stacks
    assert main(["history", "export", "--topic", topic, "--bootstrap", kafka.bootstrap, "--table", "nope"]) == 0
    assert capsys.readouterr().out == ""
