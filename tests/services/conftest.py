"""Fixtures for service tests: a throwaway PostgreSQL cluster and services as real processes."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from tests.services.pg import PostgresCluster, start_cluster
from tests.services.procs import ServiceProcess, create_topic


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresCluster]:
    cluster = start_cluster()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def evaluator(kafka) -> Iterator[ServiceProcess]:
    proc = ServiceProcess("evaluator", {"KAFKA_BOOTSTRAP": kafka.bootstrap}).start()
    try:
        yield proc
    finally:
        proc.stop()


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request) -> str:
    return request.param


def make_wallet_env(request, backend: str, kafka) -> dict[str, str]:
    """Environment for a fresh wallet: its own database, topics and consumer group."""
    run = uuid.uuid4().hex[:8]
    hands_topic = f"test.hand.settled.{run}"
    ledger_topic = f"test.wallet.ledger.{run}"
    create_topic(kafka.bootstrap, hands_topic)
    create_topic(kafka.bootstrap, ledger_topic)
    env = {
        "KAFKA_BOOTSTRAP": kafka.bootstrap,
        "WALLET_HANDS_TOPIC": hands_topic,
        "WALLET_LEDGER_TOPIC": ledger_topic,
        "WALLET_CONSUMER_GROUP": f"wallet-{run}",
        "WALLET_RELAY_INTERVAL": "0.1",
    }
    if backend == "postgres":
        cluster: PostgresCluster = request.getfixturevalue("postgres")
        env["WALLET_DB_DSN"] = cluster.create_database(f"wallet_{run}")
    return env


@pytest.fixture
def wallet_env(request, backend: str, kafka) -> dict[str, str]:
    return make_wallet_env(request, backend, kafka)


@pytest.fixture
def wallet(wallet_env: dict[str, str]) -> Iterator[ServiceProcess]:
    proc = ServiceProcess("wallet", wallet_env).start()
    try:
        yield proc
    finally:
        proc.stop()
