"""Wallet process wiring: storage, gRPC service, outbox relay and hand-settled consumer."""

from __future__ import annotations

import asyncio
import logging

from cardroom.runtime.logs import setup_logging
from cardroom.runtime.server import Registration, serve
from cardroom.v1 import wallet_pb2, wallet_pb2_grpc
from wallet.config import WalletConfig
from wallet.consumer import HandSettledConsumer
from wallet.relay import OutboxRelay
from wallet.service import WalletService
from wallet.store import open_store

log = logging.getLogger("wallet")


async def run(config: WalletConfig) -> None:
    store = open_store(config.db_dsn, config.db_path, config.db_pool, config.limits)
    log.info(
        "ledger storage ready",
        extra={
            "backend": "postgresql" if config.db_dsn else f"sqlite:{config.db_path}",
            "max_transfer": config.limits.max_transfer,
            "max_balance": config.limits.max_balance,
        },
    )
    bootstrap = config.service.kafka_bootstrap if config.kafka_enabled else None
    relay = OutboxRelay(store, bootstrap, config.ledger_topic, config.relay_interval)
    relay.start()
    consumer = None
    if bootstrap:
        consumer = HandSettledConsumer(
            store,
            bootstrap,
            config.hands_topic,
            config.consumer_group,
            config.consumer_instance,
            batch_ms=config.settlement_batch_ms,
        )
        consumer.start()
    service = WalletService(store, workers=config.db_pool)

    async def shutdown() -> None:
        loop = asyncio.get_running_loop()
        if consumer is not None:
            await loop.run_in_executor(None, consumer.stop)
        await loop.run_in_executor(None, relay.stop)
        service.executor.shutdown(wait=True)
        store.close()

    name = wallet_pb2.DESCRIPTOR.services_by_name["Wallet"].full_name
    await serve(config.service, [Registration(name, wallet_pb2_grpc.add_WalletServicer_to_server, service)], [shutdown])


def main() -> None:
    config = WalletConfig.from_env()
    setup_logging("wallet", config.service.log_level)
    asyncio.run(run(config))
