"""Tournament process wiring: store, wallet port, the tables' play, events outbox, gRPC."""

from __future__ import annotations

import asyncio
import contextlib
import logging

from cardroom.runtime.clock import SystemClock
from cardroom.runtime.directory import DealerDirectory
from cardroom.runtime.logs import setup_logging
from cardroom.runtime.publisher import AsyncPublisher
from cardroom.runtime.server import Registration, serve
from cardroom.v1 import tournament_pb2, tournament_pb2_grpc
from tournament.bank import GrpcBank
from tournament.config import TournamentServiceConfig
from tournament.dealer_tables import DealerTables
from tournament.house import TournamentHouse
from tournament.relay import EventRelay
from tournament.service import TournamentService
from tournament.store import TournamentStore

log = logging.getLogger("tournament")


async def run(config: TournamentServiceConfig) -> None:
    store = TournamentStore(config.db_path)
    bank = GrpcBank(config.wallet_addr)
    tables: DealerTables | None = None
    sender: list[asyncio.Task[None]] = []
    if config.tables == "dealer":
        bootstrap = config.service.kafka_bootstrap if config.kafka_enabled else None
        directory = None
        if bootstrap and config.dealer_directory_topic:
            directory = DealerDirectory(
                bootstrap, config.dealer_directory_topic, client_id="cardroom-tournament-directory"
            )
            directory.start()
        tables = DealerTables(config.dealer_addr, bootstrap=bootstrap, topic=config.tables_topic, directory=directory)
        tables.start()
        sender.append(asyncio.create_task(tables.run()))
    house = TournamentHouse(
        store,
        bank,
        SystemClock(),
        overlay_account=config.overlay_account,
        tick_seconds=config.tick_seconds,
        tables=tables,
        retention_seconds=config.retention_seconds,
    )
    await house.recover()
    house.start()
    publisher = AsyncPublisher(config.service.kafka_bootstrap if config.kafka_enabled else None, "tournament")
    relay_task = asyncio.create_task(EventRelay(store, publisher, config.events_topic, config.relay_interval).run())
    log.info(
        "tournaments ready",
        extra={
            "tournaments": len(house.runners),
            "forgotten": house.forgotten_count(),
            "topic": config.events_topic,
            "wallet": config.wallet_addr,
            "tables": config.dealer_addr if tables is not None else "in-process",
            "dealer_directory": (config.dealer_directory_topic or "off") if tables is not None else "off",
        },
    )

    async def shutdown() -> None:
        await house.stop()
        for task in sender:
            task.cancel()
        if tables is not None:
            await tables.close()
        relay_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await relay_task
        await publisher.aclose()
        await bank.close()
        store.close()

    name = tournament_pb2.DESCRIPTOR.services_by_name["Tournament"].full_name
    await serve(
        config.service,
        [
            Registration(
                name,
                tournament_pb2_grpc.add_TournamentServicer_to_server,
                TournamentService(house, config.operator_token),
            )
        ],
        [shutdown],
    )


def main() -> None:
    config = TournamentServiceConfig.from_env()
    setup_logging("tournament", config.service.log_level)
    asyncio.run(run(config))
