"""The wallet / rake service: a double-entry ledger with idempotent transfers (see ``store``),
its gRPC API (``service``), the Kafka outbox relay and the hand-settled consumer."""
