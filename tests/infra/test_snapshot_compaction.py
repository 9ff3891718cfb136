"""Issue 14 item 9: "Dealer restart time grows without bound ... the compacted snapshot topic is never
compacted (the active segment is never cleaned) and restore reads it from the start. Configure the
topic (segment size/time, dirty ratio) and restore so that restart time is bounded by the number of
open tables, not by history."

The catalogue's own settings for ``cardroom.table.snapshots`` reach the broker through
``deploy/kafka/admin.py``; and on the real broker, with the same settings scaled down in time
(segments of 1 s instead of 10 minutes), thousands of snapshots of a few tables shrink to about one
record per table in what the dealer's restore reads, which still restores the latest of each."""

from __future__ import annotations

import importlib.util
import sys
import time
import uuid

import pytest
import yaml
from kafka import KafkaAdminClient, KafkaProducer
from kafka.admin import ConfigResource, ConfigResourceType

from cardroom.runtime.consumer import read_to_end
from cardroom.runtime.events import make_envelope
from cardroom.v1 import dealer_pb2
from dealer.restore import SNAPSHOT_SOURCE, SNAPSHOT_TYPE, read_snapshots
from tests.infra.repo import ROOT

SNAPSHOTS = "cardroom.table.snapshots"
_spec = importlib.util.spec_from_file_location("kafka_admin", ROOT / "deploy" / "kafka" / "admin.py")
assert _spec is not None and _spec.loader is not None
kafka_admin = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("kafka_admin", kafka_admin)
_spec.loader.exec_module(kafka_admin)


def _catalogue_entry() -> dict:
    doc = yaml.safe_load((ROOT / "deploy" / "kafka" / "topics.yaml").read_text())
    return next(t for t in doc["topics"] if t["name"] == SNAPSHOTS)


def test_the_snapshot_topic_rolls_and_cleans_its_segments():
    (spec,) = [
        s for s in kafka_admin.load_catalogue(str(ROOT / "deploy" / "kafka" / "topics.yaml")) if s.name == SNAPSHOTS
    ]
    configs = spec.configs()
    assert configs["cleanup.policy"] == "compact"
    assert int(configs["segment.ms"]) <= 3_600_000, "the active segment is never cleaned: it must roll"
    assert float(configs["min.cleanable.dirty.ratio"]) <= 0.5
    assert int(configs["max.compaction.lag.ms"]) <= 24 * 3_600_000


def test_unknown_topic_configs_are_refused(tmp_path):
    path = tmp_path / "topics.yaml"
    path.write_text(
        yaml.safe_dump(
            {
                "topics": [
                    {
                        "name": "x",
                        "partitions": 1,
                        "retention_ms": -1,
                        "cleanup_policy": "compact",
                        "configs": {"unclean.leader.election.enable": "true"},
                    }
                ]
            }
        )
    )
    with pytest.raises(ValueError, match="unclean.leader.election.enable"):
        kafka_admin.load_catalogue(str(path))


@pytest.mark.kafka
@pytest.mark.slow
@pytest.mark.timeout(240)
def test_thousands_of_snapshots_of_five_tables_restore_from_about_five_records(kafka, tmp_path):
    topic = f"{SNAPSHOTS}.compaction-{uuid.uuid4().hex[:8]}"
    entry = {**_catalogue_entry(), "name": topic, "partitions": 1}
    # The catalogue's settings, scaled down in time so the test sees the cleaner work.
    entry["configs"] = {
        **entry["configs"],
        "segment.ms": 1000,
        "max.compaction.lag.ms": 1000,
        "delete.retention.ms": 1000,
    }
    catalogue = tmp_path / "topics.yaml"
    catalogue.write_text(yaml.safe_dump({"topics": [entry]}))
    assert kafka_admin.apply(kafka.bootstrap, str(catalogue)) == 0

    admin = KafkaAdminClient(bootstrap_servers=kafka.bootstrap)
    try:
        wanted = ConfigResource(ConfigResourceType.TOPIC, topic)
        applied: dict = {}
        for _ in range(50):  # a new topic's configs show once its metadata has propagated
            applied = admin.describe_configs([wanted])["topic"][topic]
            if applied:
                break
            time.sleep(0.2)
    finally:
        admin.close()
    assert {k: applied[k]["value"] for k in ("cleanup.policy", "min.cleanable.dirty.ratio", "segment.ms")} == {
        "cleanup.policy": "compact",
        "min.cleanable.dirty.ratio": "0.1",
        "segment.ms": "1000",
    }

    tables = [f"t{i}" for i in range(5)]
    producer = KafkaProducer(bootstrap_servers=kafka.bootstrap, linger_ms=5)
    written = 0

    def write(round_: int) -> None:
        nonlocal written
        for table in tables:
            snap = dealer_pb2.TableSnapshot(table_id=table, hands_dealt=round_)
            envelope = make_envelope(  # as the dealer writes it: restore refuses anything else
                type=SNAPSHOT_TYPE, source=SNAPSHOT_SOURCE, key=table, sequence=round_, payload=snap
            )
            producer.send(topic, key=table.encode(), value=envelope.SerializeToString())
            written += 1

    for round_ in range(1, 601):
        write(round_)
    producer.flush()
    last = 600
    deadline = time.monotonic() + 150
    count = written
    while time.monotonic() < deadline:
        time.sleep(2)
        last += 1
        write(last)  # a new record rolls the expired active segment, as a live table's next hand does
        producer.flush()
        count = sum(1 for _ in read_to_end(kafka.bootstrap, topic, client_id="compaction-test"))
        if count <= 4 * len(tables):
            break
    producer.close()
    assert count <= 4 * len(tables), f"{written} snapshots written, restore still reads {count}"
    restored = read_snapshots(kafka.bootstrap, topic)
    assert {t: s.hands_dealt for t, s in restored.items()} == {t: last for t in tables}
