"""Connection monitor process wiring: tracker, allowance book, Kafka events, silence sweeper."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time

from cardroom.runtime.logs import setup_logging
from cardroom.runtime.server import Registration, serve
from cardroom.v1 import connection_monitor_pb2, connection_monitor_pb2_grpc
from connection_monitor.allowance import AllowanceBook
from connection_monitor.archive import PresenceArchive
from connection_monitor.config import MonitorConfig
from connection_monitor.publisher import ConnectionEvents
from connection_monitor.service import ConnectionMonitorService
from connection_monitor.tracker import ConnectionTracker

log = logging.getLogger("connection_monitor")


async def run(config: MonitorConfig) -> None:
    book = AllowanceBook(config.db_path, config.all_in_per_window, config.all_in_window_seconds, now=time.time())
    archive = PresenceArchive(config.db_path)
    events = ConnectionEvents(config.service.kafka_bootstrap if config.kafka_enabled else None, config.events_topic)
    tracker = ConnectionTracker(config.silence_seconds, forget_after=config.forget_seconds)
    service = ConnectionMonitorService(tracker, book, events, archive=archive)
    sweeper = asyncio.create_task(service.run_sweeper(config.sweep_seconds))
    log.info("monitor ready", extra={"silence_s": config.silence_seconds, "topic": config.events_topic})

    async def shutdown() -> None:
        sweeper.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sweeper
        await asyncio.get_running_loop().run_in_executor(None, events.close)
        book.close()
        archive.close()

    name = connection_monitor_pb2.DESCRIPTOR.services_by_name["ConnectionMonitor"].full_name
    await serve(
        config.service,
        [Registration(name, connection_monitor_pb2_grpc.add_ConnectionMonitorServicer_to_server, service)],
        [shutdown],
    )


def main() -> None:
    config = MonitorConfig.from_env()
    setup_logging("connection_monitor", config.service.log_level)
    asyncio.run(run(config))
