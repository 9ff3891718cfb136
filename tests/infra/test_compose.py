"""docker-compose.yml is checked statically (no Docker engine here): it parses, Kafka is the
official image in KRaft mode, and every service has an image or build, its ports and a
health check whose command exists in this repository."""

from __future__ import annotations

from pathlib import Path

import yaml

from cardroom.runtime.config import DEFAULT_PORTS

ROOT = Path(__file__).resolve().parents[2]


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_parses_and_every_service_has_image_ports_and_healthcheck():
    services = _compose()["services"]
    for name, spec in services.items():
        assert "image" in spec or "build" in spec, name
        if name == "kafka-topics":  # one-shot job: no ports, no health
            assert spec["restart"] == "no"
            continue
        assert spec.get("ports"), f"{name} publishes no ports"
        assert spec.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"


def test_compose_kafka_is_the_official_image_in_kraft_mode():
    kafka = _compose()["services"]["kafka"]
    assert kafka["image"].startswith("apache/kafka:4.")
    env = kafka["environment"]
    assert env["KAFKA_PROCESS_ROLES"] == "broker,controller"
    assert "9092:9092" in kafka["ports"]


def test_compose_has_every_service_on_its_default_ports():
    services = _compose()["services"]
    for name, (grpc_port, metrics_port) in DEFAULT_PORTS.items():
        spec = services[name]
        assert spec["command"] == ["python", "-m", name]
        assert f"{grpc_port}:{grpc_port}" in spec["ports"]
        assert f"{metrics_port}:{metrics_port}" in spec["ports"]
        assert spec["environment"]["GRPC_PORT"] == str(grpc_port)
        assert spec["environment"]["KAFKA_BOOTSTRAP"] == "kafka:9092"


def test_compose_build_and_health_probe_exist():
    services = _compose()["services"]
    dockerfile = ROOT / services["evaluator"]["build"]["dockerfile"]
    assert dockerfile.exists()
    probe = services["evaluator"]["healthcheck"]["test"]
    module = probe[probe.index("-m") + 1]
    assert (ROOT / "services" / Path(*module.split("."))).with_suffix(".py").exists()


def test_healthcheck_probe_reports_not_serving_when_nothing_listens(monkeypatch):
    from cardroom.runtime import healthcheck

    monkeypatch.setenv("GRPC_PORT", "1")  # nothing listens on port 1
    assert healthcheck.main() == 1
    monkeypatch.delenv("GRPC_PORT")
    assert healthcheck.main() == 2
