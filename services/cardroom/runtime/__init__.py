"""The service runtime every Cardroom service shares.

``config`` reads the environment, ``logs`` writes JSON lines, ``metrics`` holds the gRPC
server interceptor and the ``/metrics`` endpoint, ``server`` runs a ``grpc.aio`` server with
health and reflection until SIGTERM, ``deadlines`` puts a timeout on every outbound call,
``events`` produces enveloped Kafka events, ``publisher`` publishes them from asyncio
(awaiting the broker's acknowledgement), ``consumer`` is the one Kafka consumer loop (and a
read-to-the-end), ``mailbox`` an actor's command queue with idempotent request ids, and
``clock`` the time as a dependency (system clock, manual clock for tests). Trust (docs/security.md):
``pki`` makes the project CA and per-identity certificates, ``trust`` is the one caller table and its
server interceptor (mutual TLS), ``kafka_auth`` a service's Kafka user, ``production`` what production
mode requires before a service starts. Dealer shards (docs/sharding.md): ``claims`` folds the dealer
directory's records, ``directory`` reads them in a background thread, ``routing`` sends a table's calls
to the replica that deals it.
"""
