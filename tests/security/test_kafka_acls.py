"""Issue 14, security 1: "a record produced to `cardroom.hand.settled` drains escrow as "rake"; a record on
`cardroom.connection.events` disconnects any player". On the real broker with authentication and ACLs
(deploy/kafka/kafka.sh KAFKA_AUTH=scram, deploy/kafka/acls.yaml), through the runtime's own producer and
consumer factories: only the dealer writes hand results, only the connection monitor writes connection
events, only the wallet reads hand results, and a client without credentials gets nothing.
Security 4: "Hole cards and seeds are kept forever in Kafka, … readable by any client": the full hand
records are read by the operator only, the snapshots (a hand's pending record) by the dealer only.
The dealer directory (docs/sharding.md), which names where a table's calls go, is written by the dealer
only and read by the services that route by it (gateway, tournament) and the dealer."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest
from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.errors import KafkaError, TopicAuthorizationFailedError

from cardroom.runtime.claims import CLAIM_SOURCE, CLAIM_TYPE
from cardroom.runtime.consumer import ConsumerSettings, await_partitions, open_consumer
from cardroom.runtime.directory import DealerDirectory
from cardroom.runtime.events import EventProducer
from cardroom.runtime.kafka_auth import KafkaCredentials, client_settings
from cardroom.v1 import dealer_pb2, events_pb2
from tests.kafka_broker import KafkaBroker, auth_broker_port

pytestmark = pytest.mark.slow

SETTLED, CONNECTION = "cardroom.hand.settled", "cardroom.connection.events"
RECORDS, SNAPSHOTS = "cardroom.hand.records", "cardroom.table.snapshots"
TOURNAMENT_TABLES = "cardroom.tournament.tables"  # 3 partitions (deploy/kafka/topics.yaml)
DIRECTORY = "cardroom.dealer.directory"  # 1 partition
USERS = ("dealer", "wallet", "connection_monitor", "gateway", "tournament", "operator", "evaluator")


@pytest.fixture(scope="module")
def broker() -> Iterator[KafkaBroker]:
    broker = KafkaBroker(auth_broker_port(), auth=True)
    broker.start(fresh=True)
    try:
        yield broker
    finally:
        broker.stop()


def as_user(broker: KafkaBroker, user: str) -> KafkaCredentials:
    return KafkaCredentials(*broker.credentials(user))


def forge(broker: KafkaBroker, user: str, topic: str) -> None:
    """Publish one enveloped record as ``user`` through the runtime's producer (waits for the ack)."""
    producer = EventProducer(broker.bootstrap, "attacker", request_timeout_ms=10_000, credentials=as_user(broker, user))
    try:
        producer.publish(
            topic,
            type="cardroom.dealer.hand_settled.v1",
            key="table-1",
            sequence=1,
            payload=events_pb2.EventEnvelope(key="forged"),
        )
    finally:
        producer.close(1)


@pytest.mark.parametrize("user", ["gateway", "wallet", "connection_monitor", "tournament", "operator", "evaluator"])
def test_a_forged_hand_result_is_refused_for_every_user_but_the_dealer(broker: KafkaBroker, user: str) -> None:
    with pytest.raises(TopicAuthorizationFailedError):
        forge(broker, user, SETTLED)


@pytest.mark.parametrize("user", ["gateway", "dealer", "wallet"])
def test_a_forged_disconnection_is_refused_for_every_user_but_the_monitor(broker: KafkaBroker, user: str) -> None:
    with pytest.raises(TopicAuthorizationFailedError):
        forge(broker, user, CONNECTION)


def test_the_named_writers_write_and_only_the_wallet_reads_hand_results(
    broker: KafkaBroker, monkeypatch: pytest.MonkeyPatch
) -> None:
    forge(broker, "dealer", SETTLED)  # the architecture's writers are let through
    forge(broker, "connection_monitor", CONNECTION)
    # The wallet reads hand results in its consumer group, through the runtime's factory and env.
    user, password = broker.credentials("wallet")
    monkeypatch.setenv("KAFKA_USERNAME", user)
    monkeypatch.setenv("KAFKA_PASSWORD", password)
    consumer = open_consumer(
        ConsumerSettings(
            broker.bootstrap,
            (SETTLED,),
            client_id="wallet-test",
            group_id="wallet-acl-test",
            auto_offset_reset="earliest",
        )
    )
    try:
        await_partitions(consumer, (SETTLED,), retry_seconds=0.2, timeout=30)
        records = []
        for _ in range(30):
            for batch in consumer.poll(timeout_ms=1000).values():
                records.extend(batch)
            if records:
                break
        assert records and records[0].key == b"table-1"
    finally:
        consumer.close()
    # Anyone else reading them (the hand results name every seat's winnings) gets nothing: the same
    # group-less read from the beginning that returns the record to the wallet returns none to them.
    assert read_all(broker, "wallet"), "the reader below does not read"
    for other in ("gateway", "connection_monitor", "operator", "dealer"):
        try:
            keys = read_all(broker, other)
        except TopicAuthorizationFailedError:
            keys = []  # refused outright (kafka-python raises it from the offset lookup, or ...)
        assert keys == [], other  # (... logs it and returns no records)


@pytest.mark.parametrize(("topic", "readers"), [(RECORDS, {"operator"}), (SNAPSHOTS, {"dealer"})])
def test_hole_cards_and_seeds_are_read_only_where_the_operator_needs_them(
    broker: KafkaBroker, topic: str, readers: set[str]
) -> None:
    """The hand records hold every seat's hole cards and the deck's seed; the snapshots a hand's
    pending record. The dealer writes both; nobody but their named readers gets a record back."""
    forge(broker, "dealer", topic)
    for reader in sorted(readers):
        assert read_all(broker, reader, topic), f"{reader} does not read {topic}: the refusals below prove nothing"
    for other in sorted(set(USERS) - readers):
        try:
            keys = read_all(broker, other, topic, polls=3)
        except TopicAuthorizationFailedError:
            keys = []
        assert keys == [], f"{other} read {topic}"


@pytest.mark.parametrize("user", [u for u in USERS if u != "dealer"])
def test_a_forged_tournament_table_result_is_refused_for_every_user_but_the_dealer(
    broker: KafkaBroker, user: str
) -> None:
    """The tournament service places and pays players from these hand results: only the dealer
    that plays the tables writes them."""
    with pytest.raises(TopicAuthorizationFailedError):
        forge(broker, user, TOURNAMENT_TABLES)


def test_only_the_tournament_service_reads_its_tables_results(broker: KafkaBroker) -> None:
    forge(broker, "dealer", TOURNAMENT_TABLES)
    assert read_all(broker, "tournament", TOURNAMENT_TABLES, partitions=3), "the reader below does not read"
    for other in sorted(set(USERS) - {"tournament"}):
        try:
            keys = read_all(broker, other, TOURNAMENT_TABLES, polls=3, partitions=3)
        except TopicAuthorizationFailedError:
            keys = []
        assert keys == [], f"{other} read {TOURNAMENT_TABLES}"


@pytest.mark.parametrize("user", [u for u in USERS if u != "dealer"])
def test_a_forged_dealer_claim_is_refused_for_every_user_but_the_dealer(broker: KafkaBroker, user: str) -> None:
    """A claim in the dealer directory sends a table's calls (a player's seat, his actions) to the
    address it names: only the dealer replicas write it (docs/sharding.md). The gateway, which may
    describe the topic (it reads it) but writes nowhere, is refused one step earlier: the idempotent
    producer's id needs a write grant somewhere (ClusterAuthorizationFailed)."""
    with pytest.raises(KafkaError, match="(Topic|Cluster)AuthorizationFailed"):
        forge(broker, user, DIRECTORY)


def test_the_services_that_route_by_the_dealer_directory_read_it_and_nobody_else(broker: KafkaBroker) -> None:
    claim = dealer_pb2.DealerClaim(partition=0, address="10.0.0.1:20053", replica="dealer-0", partitions=6)
    writer = EventProducer(broker.bootstrap, CLAIM_SOURCE, credentials=as_user(broker, "dealer"))
    try:
        writer.publish(DIRECTORY, type=CLAIM_TYPE, key="0", sequence=0, payload=claim)
    finally:
        writer.close(1)
    # the gateway's reader as the runtime runs it: group-less, its own user
    directory = DealerDirectory(broker.bootstrap, DIRECTORY, credentials=as_user(broker, "gateway"), retry_seconds=0.2)
    directory.start()
    try:
        deadline = time.monotonic() + 30
        while directory.addresses() != ["10.0.0.1:20053"]:
            assert time.monotonic() < deadline, "the gateway did not read the dealer's claim"
            time.sleep(0.1)
    finally:
        directory.stop()
    for reader in ("dealer", "tournament"):  # the dealer's claim, and no forged record before it
        assert read_all(broker, reader, DIRECTORY, partitions=1) == [b"0"], f"{reader} does not read {DIRECTORY}"
    for other in sorted(set(USERS) - {"dealer", "gateway", "tournament"}):
        try:
            keys = read_all(broker, other, DIRECTORY, polls=3, partitions=1)
        except TopicAuthorizationFailedError:
            keys = []
        assert keys == [], f"{other} read {DIRECTORY}"


def read_all(broker: KafkaBroker, user: str, topic: str = SETTLED, polls: int = 8, partitions: int = 6) -> list[bytes]:
    """Every key on every partition of ``topic``, read as ``user`` without a group."""
    reader = KafkaConsumer(
        bootstrap_servers=broker.bootstrap,
        group_id=None,
        enable_auto_commit=False,
        **client_settings(as_user(broker, user)),
    )
    try:
        reader.assign([TopicPartition(topic, p) for p in range(partitions)])  # deploy/kafka/topics.yaml
        reader.seek_to_beginning()
        keys: list[bytes] = []
        for _ in range(polls):
            for batch in reader.poll(timeout_ms=1000).values():
                keys.extend(record.key for record in batch)
            if keys:
                break
        return keys
    finally:
        reader.close()


def test_no_credentials_no_access(broker: KafkaBroker) -> None:
    producer = None
    with pytest.raises(KafkaError):
        producer = KafkaProducer(bootstrap_servers=broker.bootstrap, max_block_ms=5000, request_timeout_ms=5000)
        producer.send(SETTLED, b"forged").get(timeout=10)
    if producer is not None:
        producer.close(1)


def test_a_wrong_password_is_refused(broker: KafkaBroker) -> None:
    with pytest.raises(KafkaError):
        forge_with = KafkaCredentials("dealer", "not-the-password")
        producer = EventProducer(broker.bootstrap, "attacker", request_timeout_ms=5000, credentials=forge_with)
        producer.close(1)


@pytest.mark.parametrize("user", [u for u in USERS if u != "dealer"])
def test_only_the_dealer_takes_a_partition_s_transactional_id(broker: KafkaBroker, user: str) -> None:
    """Taking ``dealer.tables.<partition>`` aborts the holder's open transaction and fences it
    (docs/sharding.md): any other user could stop a dealer's hand records that way, so only the dealer
    may (deploy/kafka/acls.yaml ``transactions``)."""
    from cardroom.runtime.transactions import kafka_producer

    producer = kafka_producer(broker.bootstrap, "dealer.tables.0", "attacker", credentials=as_user(broker, user))
    try:
        with pytest.raises(KafkaError, match="TransactionalIdAuthorizationFailed"):
            producer.init_transactions()
    finally:
        producer.close(timeout=1)


def test_the_dealer_takes_its_partitions_transactional_ids(broker: KafkaBroker) -> None:
    from cardroom.runtime.transactions import kafka_producer

    producer = kafka_producer(broker.bootstrap, "dealer.tables.1", "dealer", credentials=as_user(broker, "dealer"))
    try:
        producer.init_transactions()
        with pytest.raises(KafkaError, match="TransactionalIdAuthorizationFailed"):  # only its own prefix
            other = kafka_producer(broker.bootstrap, "wallet.x", "dealer", credentials=as_user(broker, "dealer"))
            try:
                other.init_transactions()
            finally:
                other.close(timeout=1)
    finally:
        producer.close(timeout=1)
