"""Gateway process wiring: backend channels and the client-facing gRPC server."""

from __future__ import annotations

import asyncio
import logging

from cardroom.runtime.directory import DealerDirectory
from cardroom.runtime.logs import setup_logging
from cardroom.runtime.server import Registration, serve
from cardroom.v1 import gateway_pb2, gateway_pb2_grpc
from gateway.clients import Backends
from gateway.config import GatewayConfig
from gateway.operator import GatewayOperatorService
from gateway.service import GatewayService

log = logging.getLogger("gateway")


async def run(config: GatewayConfig) -> None:
    directory = None
    if config.dealer_directory_topic:
        directory = DealerDirectory(
            config.service.kafka_bootstrap, config.dealer_directory_topic, client_id="cardroom-gateway-directory"
        )
        directory.start()
    backends = Backends.connect(
        config.dealer_addr,
        config.wallet_addr,
        config.monitor_addr,
        config.tournament_addr,
        directory,
        table_feeds=config.table_feeds,
    )
    service = GatewayService(config, backends)
    service.presence.start()  # the one heartbeat stream of this process (none without a monitor)
    log.info(
        "backends",
        extra={
            "dealer": config.dealer_addr,
            "dealer_directory": config.dealer_directory_topic or "off",
            "wallet": config.wallet_addr,
            "connection_monitor": config.monitor_addr or "off",
            "tournament": config.tournament_addr or "off",
            "operator_api": "on" if config.operator_token else "off",
        },
    )
    names = gateway_pb2.DESCRIPTOR.services_by_name
    await serve(
        config.service,
        [
            Registration(names["Gateway"].full_name, gateway_pb2_grpc.add_GatewayServicer_to_server, service),
            Registration(
                names["GatewayOperator"].full_name,
                gateway_pb2_grpc.add_GatewayOperatorServicer_to_server,
                GatewayOperatorService(config.operator_token, backends, service.cashier),
            ),
        ],
        [service.presence.stop, backends.close],
    )


def main() -> None:
    setup_logging("gateway", "INFO")
    config = GatewayConfig.from_env()
    logging.getLogger().setLevel(config.service.log_level)
    asyncio.run(run(config))
