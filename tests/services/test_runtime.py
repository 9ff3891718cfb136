"""The shared service runtime, seen from outside a real service process: health per service,
reflection, gRPC metrics with status codes, JSON logs, graceful shutdown, deadlines, events."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc
from kafka import KafkaConsumer

from cardroom.runtime.deadlines import insecure_channel
from cardroom.runtime.events import EventProducer, decode_envelope, unpack
from cardroom.runtime.publisher import AsyncPublisher
from cardroom.v1 import common_pb2, evaluator_pb2, evaluator_pb2_grpc, events_pb2
from tests.ports import free_port
from tests.services.procs import ServiceProcess, create_topic, metric_value


def _list_services(address: str) -> set[str]:
    with grpc.insecure_channel(address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        replies = stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5)
        return {s.name for reply in replies for s in reply.list_services_response.service}


def test_health_per_service_name(evaluator: ServiceProcess) -> None:
    with grpc.insecure_channel(evaluator.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        for name in ("", "cardroom.v1.Evaluator", "evaluator"):  # issue 13: the short name too
            reply = stub.Check(health_pb2.HealthCheckRequest(service=name), timeout=5)
            assert reply.status == health_pb2.HealthCheckResponse.SERVING, name
        with pytest.raises(grpc.RpcError) as err:
            stub.Check(health_pb2.HealthCheckRequest(service="cardroom.v1.Nope"), timeout=5)
        assert err.value.code() == grpc.StatusCode.NOT_FOUND


def test_reflection_lists_every_service(evaluator: ServiceProcess) -> None:
    names = _list_services(evaluator.address)
    assert {"cardroom.v1.Evaluator", "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= names
    with grpc.insecure_channel(evaluator.address) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        request = reflection_pb2.ServerReflectionRequest(file_containing_symbol="cardroom.v1.Evaluator")
        reply = next(iter(stub.ServerReflectionInfo(iter([request]), timeout=5)))
        assert reply.file_descriptor_response.file_descriptor_proto, "descriptor for grpcurl describe"


def test_metrics_count_rpcs_by_status_code(evaluator: ServiceProcess) -> None:
    labels = {"grpc_service": "cardroom.v1.Evaluator", "grpc_method": "Evaluate", "grpc_type": "unary"}
    before = evaluator.metrics()
    with grpc.insecure_channel(evaluator.address) as channel:
        stub = evaluator_pb2_grpc.EvaluatorStub(channel)
        stub.Evaluate(
            evaluator_pb2.EvaluateRequest(
                ranking=evaluator_pb2.RANKING_HIGH, hole=["As", "Ks"], board=["Qs", "Js", "Ts"]
            ),
            timeout=5,
        )
        for _ in range(2):
            with pytest.raises(grpc.RpcError):
                stub.Evaluate(evaluator_pb2.EvaluateRequest(ranking=evaluator_pb2.RANKING_HIGH, hole=["As"]), timeout=5)

    def delta(name: str, **extra: str) -> float:
        return metric_value(after, name, **labels, **extra) - metric_value(before, name, **labels, **extra)

    # The client may hear a call's status a moment before the server's interceptor counts it (a CI
    # run read 1 of the 2 INVALID_ARGUMENT): read again until the server counted what it handled.
    deadline = time.monotonic() + 10
    while True:
        after = evaluator.metrics()
        if delta("grpc_server_handling_seconds_count") >= 3 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert delta("grpc_server_started_total") == 3
    assert delta("grpc_server_handled_total", grpc_code="OK") == 1
    assert delta("grpc_server_handled_total", grpc_code="INVALID_ARGUMENT") == 2
    assert delta("grpc_server_handling_seconds_count") == 3


def test_a_service_reports_its_garbage_collectors_pauses(evaluator: ServiceProcess) -> None:
    """cardroom.runtime.collector: at least the full collection before the start-up is frozen."""
    metrics = evaluator.metrics()
    assert metric_value(metrics, "python_gc_pause_seconds_count", generation="2") >= 1, metrics


def test_a_service_reports_how_late_its_event_loop_runs(evaluator: ServiceProcess) -> None:
    """cardroom.runtime.looplag: the loop's lateness is sampled every 0.1 s from the start."""
    deadline = time.monotonic() + 10
    while metric_value(metrics := evaluator.metrics(), "python_asyncio_loop_lag_seconds_count") < 3:
        assert time.monotonic() < deadline, metrics
        time.sleep(0.1)
    assert metric_value(metrics, "python_asyncio_loop_lag_seconds_bucket", le="+Inf") >= 3


def test_logs_are_json_lines(evaluator: ServiceProcess) -> None:
    records = evaluator.log_records()
    serving = [r for r in records if r["message"] == "serving"]
    assert serving and serving[0]["service"] == "evaluator" and serving[0]["grpc"] == evaluator.address
    assert all({"time", "level", "logger", "message"} <= set(r) for r in records)


@pytest.mark.slow
def test_sigterm_reports_not_serving_then_exits(kafka) -> None:
    proc = ServiceProcess("evaluator", {"KAFKA_BOOTSTRAP": kafka.bootstrap, "SHUTDOWN_DELAY": "1.5"}).start()
    statuses: list[int] = []
    with grpc.insecure_channel(proc.address) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        watch = stub.Watch(health_pb2.HealthCheckRequest(service="cardroom.v1.Evaluator"), timeout=30)

        def read() -> None:
            try:
                for reply in watch:
                    statuses.append(reply.status)
            except grpc.RpcError:
                pass

        reader = threading.Thread(target=read, daemon=True)
        reader.start()
        time.sleep(0.5)
        started = time.monotonic()
        assert proc.proc is not None
        proc.proc.terminate()
        # During the shutdown delay the overall status is NOT_SERVING while the server still answers.
        reply = None
        while time.monotonic() - started < 1.2:
            reply = stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=2)
            if reply.status == health_pb2.HealthCheckResponse.NOT_SERVING:
                break
            time.sleep(0.05)
        assert reply is not None and reply.status == health_pb2.HealthCheckResponse.NOT_SERVING
        assert proc.proc.wait(20) == 0
        reader.join(5)
    assert statuses[0] == health_pb2.HealthCheckResponse.SERVING
    assert health_pb2.HealthCheckResponse.NOT_SERVING in statuses
    assert any(r["message"] == "stopped" for r in proc.log_records())


def test_outbound_calls_get_a_deadline() -> None:
    async def call() -> grpc.StatusCode:
        # Nobody listens there; wait_for_ready would wait forever without a deadline.
        async with insecure_channel(f"127.0.0.1:{free_port()}", default_timeout=0.3) as channel:
            stub = evaluator_pb2_grpc.EvaluatorStub(channel)
            try:
                await stub.Evaluate(evaluator_pb2.EvaluateRequest(), wait_for_ready=True)
            except grpc.aio.AioRpcError as err:
                return err.code()
        return grpc.StatusCode.OK

    started = time.monotonic()
    assert asyncio.run(call()) == grpc.StatusCode.DEADLINE_EXCEEDED
    assert time.monotonic() - started < 3


def test_event_producer_writes_envelope_and_headers(kafka) -> None:
    topic = f"test.runtime.{uuid.uuid4().hex[:8]}"
    create_topic(kafka.bootstrap, topic, partitions=1)
    producer = EventProducer(kafka.bootstrap, "tester")
    sent = [
        producer.publish(
            topic,
            type="cardroom.test.hand_settled.v1",
            key="hand-1",
            sequence=i,
            payload=events_pb2.HandSettled(hand_id="hand-1", table_id="t1", currency=common_pb2.CURRENCY_CASH, rake=i),
        )
        for i in (1, 2)
    ]
    producer.close()
    consumer = KafkaConsumer(
        topic, bootstrap_servers=kafka.bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=10_000
    )
    records = []
    for record in consumer:
        records.append(record)
        if len(records) == 2:
            break
    consumer.close()
    assert [r.key for r in records] == [b"hand-1", b"hand-1"]
    for record, envelope in zip(records, sent, strict=True):
        got = decode_envelope(record.value)
        assert got == envelope
        assert got.source == "tester" and got.event_id and got.time.seconds > 0
        headers = dict(record.headers)
        assert headers["ce_id"] == got.event_id.encode()
        assert headers["ce_type"] == b"cardroom.test.hand_settled.v1"
        assert headers["ce_subject"] == b"hand-1"
        assert headers["cardroom_sequence"] == str(got.sequence).encode()
    assert [unpack(decode_envelope(r.value), events_pb2.HandSettled).rake for r in records] == [1, 2]
    assert unpack(decode_envelope(records[0].value), events_pb2.AccountOpened) is None


def test_config_reads_the_environment(monkeypatch) -> None:
    from cardroom.runtime.config import ServiceConfig

    for name in ("HOST", "GRPC_PORT", "METRICS_PORT", "KAFKA_BOOTSTRAP", "DATA_DIR", "LOG_LEVEL"):
        monkeypatch.delenv(name, raising=False)
    default = ServiceConfig.from_env("wallet")
    assert (default.host, default.grpc_port, default.metrics_port) == ("127.0.0.1", 20052, 9102)
    monkeypatch.setenv("GRPC_PORT", "6000")
    monkeypatch.setenv("METRICS_PORT", "6001")
    monkeypatch.setenv("KAFKA_BOOTSTRAP", "127.0.0.1:1234")
    monkeypatch.setenv("DATA_DIR", "/tmp/x")
    monkeypatch.setenv("LOG_LEVEL", "debug")
    config = ServiceConfig.from_env("evaluator")
    assert (config.grpc_address, config.metrics_port, config.kafka_bootstrap) == (
        "127.0.0.1:6000",
        6001,
        "127.0.0.1:1234",
    )
    assert str(config.data_dir) == "/tmp/x" and config.log_level == "DEBUG"
    monkeypatch.setenv("GRPC_PORT", "abc")
    with pytest.raises(SystemExit, match="GRPC_PORT"):
        ServiceConfig.from_env("evaluator")


def _sequences(bootstrap: str, topic: str, count: int) -> list[tuple[str, int]]:
    """The first ``count`` records of ``topic``: (key, sequence) in each partition's order."""
    consumer = KafkaConsumer(
        topic, bootstrap_servers=bootstrap, auto_offset_reset="earliest", consumer_timeout_ms=10_000
    )
    seen: list[tuple[str, int]] = []
    for record in consumer:
        envelope = decode_envelope(record.value)
        seen.append((envelope.key, envelope.sequence))
        if len(seen) == count:
            break
    consumer.close()
    return seen


def test_an_awaited_publish_does_not_wait_for_the_linger(kafka) -> None:
    """The dealer's publisher lingers (DEALER_KAFKA_LINGER_MS) so that table events share requests; a
    record someone waits for (the snapshot of a sit-down before its buy-in) is sent at once, after
    what was fired before it, and the records fired after it linger again."""
    topic = f"test.runtime.linger.{uuid.uuid4().hex[:8]}"
    create_topic(kafka.bootstrap, topic, partitions=1)
    publisher = AsyncPublisher(kafka.bootstrap, "tester", linger_ms=60_000)  # a minute
    settled = events_pb2.HandSettled(hand_id="h", table_id="t1", currency=common_pb2.CURRENCY_CASH)

    async def run() -> None:
        publisher.fire(topic, type="cardroom.test.v1", key="t1", sequence=1, payload=settled)
        await asyncio.sleep(0.5)
        assert publisher.pending == 1  # lingering: the publish backlog the dealer's gauge exports
        await publisher.publish(topic, type="cardroom.test.v1", key="t1", sequence=2, payload=settled, timeout=30)
        assert publisher.pending == 0
        publisher.fire(topic, type="cardroom.test.v1", key="t1", sequence=3, payload=settled)
        await asyncio.sleep(1.0)
        assert publisher.pending == 1  # lingering (a minute), not sent
        assert _sequences(kafka.bootstrap, topic, 2) == [("t1", 1), ("t1", 2)]  # the fired one first
        await publisher.aclose()  # a service stopping: the lingering record goes out

    asyncio.run(run())  # answered well inside its timeout, not after a minute
    assert publisher.pending == 0
    assert _sequences(kafka.bootstrap, topic, 3) == [("t1", 1), ("t1", 2), ("t1", 3)]


def test_fired_records_wake_the_producers_sender_once(kafka) -> None:
    """kafka-python wakes its sender thread at every record that opens a batch; the records fired within
    one linger, over many partitions, are handed over together and wake it once (docs/capacity.md, "The
    dealer's linger on its event loop"), and each table's records keep their order."""
    topic = f"test.runtime.wakes.{uuid.uuid4().hex[:8]}"
    create_topic(kafka.bootstrap, topic, partitions=6)
    publisher = AsyncPublisher(kafka.bootstrap, "tester", linger_ms=300)
    producer = publisher.producer
    assert producer is not None
    assert producer.partitions_for(topic) == set(range(6))  # known: a send never waits for them
    settled = events_pb2.HandSettled(hand_id="h", table_id="t", currency=common_pb2.CURRENCY_CASH)
    tables = [f"table-{n}" for n in range(12)]

    async def run() -> int:
        before = producer.wakes
        for sequence in (1, 2):
            for table in tables:
                publisher.fire(topic, type="cardroom.test.v1", key=table, sequence=sequence, payload=settled)
        await asyncio.sleep(0.1)
        assert publisher.pending == 24 and producer.wakes == before  # lingering on the loop
        for _ in range(100):
            await asyncio.sleep(0.05)
            if publisher.pending == 0:
                break
        return producer.wakes - before

    assert asyncio.run(run()) == 1
    seen = _sequences(kafka.bootstrap, topic, 24)
    assert sorted(seen) == sorted((t, n) for t in tables for n in (1, 2))
    assert all(seen.index((t, 1)) < seen.index((t, 2)) for t in tables)
    publisher.close()
