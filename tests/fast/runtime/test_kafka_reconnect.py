"""Every Kafka client of the card room is made with ``client_settings``: after a broker restart it tries
the broker again at most every 2 s, not kafka-python's 30 s (the gateway's dealer directory and the
wallet's settlements stayed stale that long after the broker was back)."""

from __future__ import annotations

from kafka import KafkaAdminClient, KafkaConsumer, KafkaProducer

from cardroom.runtime.kafka_auth import KafkaCredentials, client_settings


def test_the_reconnect_back_off_is_bounded_with_and_without_credentials() -> None:
    for settings in (client_settings(), client_settings(KafkaCredentials("dealer", "pw", "SASL_PLAINTEXT"))):
        assert settings["reconnect_backoff_max_ms"] <= 2000 and settings["reconnect_backoff_ms"] <= 100
    with_user = client_settings(KafkaCredentials("dealer", "pw", "SASL_PLAINTEXT"))
    assert with_user["sasl_plain_username"] == "dealer" and with_user["security_protocol"] == "SASL_PLAINTEXT"


def test_every_kind_of_kafka_client_takes_the_settings() -> None:
    for kind in (KafkaProducer, KafkaConsumer, KafkaAdminClient):
        assert set(client_settings()) <= set(kind.DEFAULT_CONFIG), kind
