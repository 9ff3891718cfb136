"""Evaluator process wiring: warm the compiled batch kernels, then serve."""

from __future__ import annotations

import asyncio
import logging

from cardroom.core.cards import parse_cards
from cardroom.runtime.logs import setup_logging
from cardroom.runtime.server import Registration, serve
from cardroom.v1 import common_pb2, evaluator_pb2, evaluator_pb2_grpc
from evaluator.config import EvaluatorConfig
from evaluator.equity import equity
from evaluator.games import GAMES
from evaluator.service import EvaluatorService

log = logging.getLogger("evaluator")


def warm_up() -> None:
    """Compile (or load from cache) every batch kernel Equity uses before reporting SERVING."""
    board = parse_cards("2c 7d 9h")
    equity(GAMES[common_pb2.GAME_HOLDEM], [parse_cards("Ah Ad"), parse_cards("Kc Ks")], board, [])
    equity(GAMES[common_pb2.GAME_OMAHA_HI_LO], [parse_cards("Ah Ad 3c 4d"), parse_cards("Kc Ks Qh Jh")], board, [])


async def run(config: EvaluatorConfig) -> None:
    service = EvaluatorService(limits=config.equity)
    await asyncio.get_running_loop().run_in_executor(service.executor, warm_up)
    log.info("batch evaluators ready", extra={"equity_limits": str(config.equity)})

    async def shutdown() -> None:
        service.executor.shutdown(wait=True)

    name = evaluator_pb2.DESCRIPTOR.services_by_name["Evaluator"].full_name
    await serve(
        config.service, [Registration(name, evaluator_pb2_grpc.add_EvaluatorServicer_to_server, service)], [shutdown]
    )


def main() -> None:
    config = EvaluatorConfig.from_env()
    setup_logging("evaluator", config.service.log_level)
    asyncio.run(run(config))
