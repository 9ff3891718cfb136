"""Cross-check each contested showdown with the evaluator service.

The engine settles the pots itself (it must: a hand cannot wait on another service to
continue, and a replayed PHH must settle identically offline). After the hand the dealer
sends the same showdown to the evaluator's ``Showdown`` RPC and compares the chips each seat
won; a disagreement is logged and counted (``dealer_showdown_checks_total{outcome}``),
never applied: the engine is the authority, the evaluator an independent audit.

The audit runs beside the table (the hand cycle does not await it), so it can wait for an
evaluator that is restarting: a call refused as UNAVAILABLE (or out of time) is sent again,
waiting for the channel to be ready, until ``retry_seconds`` have passed (issue 14 item 14: the
audits of the hands dealt while the evaluator restarted were lost as ``error``).
"""

from __future__ import annotations

import asyncio
import logging
import time

import grpc

from cardroom.core.engine import Game, Hand, HandShown, PotAwarded
from cardroom.runtime.deadlines import insecure_channel
from cardroom.v1 import common_pb2, evaluator_pb2, evaluator_pb2_grpc
from dealer import metrics

log = logging.getLogger("dealer.showdown")

#: Codes of an evaluator that is down or restarting (asked again); any other is final.
RETRIED = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})

GAMES: dict[Game, common_pb2.Game] = {
    Game.HOLDEM: common_pb2.GAME_HOLDEM,
    Game.OMAHA: common_pb2.GAME_OMAHA,
    Game.OMAHA_HILO: common_pb2.GAME_OMAHA_HI_LO,
    Game.STUD: common_pb2.GAME_STUD,
    Game.STUD_HILO: common_pb2.GAME_STUD_HI_LO,
    Game.TRIPLE_DRAW_27: common_pb2.GAME_DEUCE_SEVEN,
    Game.SOKO: common_pb2.GAME_SOKO,
}


def showdown_request(hand: Hand, hand_id: str) -> tuple[evaluator_pb2.ShowdownRequest, dict[int, int]] | None:
    """The evaluator request for ``hand`` and the engine's chips won per seat; None when
    nothing was contested at a showdown (or the evaluator does not know the game)."""
    game = GAMES.get(hand.variant.game)
    live = [s for s in hand.seats if not hand.folded[hand.position(s)]]
    if game is None or len(live) < 2 or not any(isinstance(e, HandShown) for e in hand.events):
        return None
    pots: dict[int, tuple[int, tuple[int, ...]]] = {}
    won: dict[int, int] = {}
    for e in hand.events:
        if isinstance(e, PotAwarded):
            amount, _ = pots.get(e.pot_index, (0, e.members))
            pots[e.pot_index] = (amount + e.amount, e.members)
            for seat, chips in e.winners:
                won[seat] = won.get(seat, 0) + chips
    request = evaluator_pb2.ShowdownRequest(
        game=game,
        board=[str(c) for c in hand.board],
        button_seat=hand.button or 0,
        hand_id=hand_id,
        players=[evaluator_pb2.ShowdownPlayer(seat=s, hole=[str(c) for c in hand.hole_cards(s)]) for s in live],
        pots=[evaluator_pb2.Pot(amount=a, eligible_seats=list(m)) for _, (a, m) in sorted(pots.items())],
    )
    return request, won


class ShowdownChecker:
    """Async client of the evaluator; ``check`` never raises."""

    def __init__(self, address: str | None, timeout: float = 3.0, retry_seconds: float = 60.0) -> None:
        self.channel = insecure_channel(address, timeout) if address else None
        self.stub = evaluator_pb2_grpc.EvaluatorStub(self.channel) if self.channel else None
        self.timeout, self.retry_seconds = timeout, retry_seconds

    async def check(self, hand: Hand, hand_id: str) -> str:
        built = showdown_request(hand, hand_id)
        if built is None or self.stub is None:
            return "skipped"
        request, won = built
        try:
            reply = await self._showdown(request)
        except grpc.aio.AioRpcError as err:
            log.warning(
                "evaluator showdown failed",
                extra={"hand_id": hand_id, "code": err.code().name, "details": err.details()},
            )
            metrics.SHOWDOWN_CHECKS.labels("error").inc()
            return "error"
        theirs = {t.seat: t.amount for t in reply.totals if t.amount}
        ours = {s: a for s, a in won.items() if a}
        outcome = "match" if theirs == ours else "mismatch"
        if outcome == "mismatch":
            log.warning(
                "evaluator disagrees with the engine", extra={"hand_id": hand_id, "engine": ours, "evaluator": theirs}
            )
        metrics.SHOWDOWN_CHECKS.labels(outcome).inc()
        return outcome

    async def _showdown(self, request: evaluator_pb2.ShowdownRequest) -> evaluator_pb2.ShowdownResponse:
        """The evaluator's answer, asked again while it is unreachable, up to ``retry_seconds``."""
        assert self.stub is not None
        give_up = time.monotonic() + self.retry_seconds
        while True:
            try:
                return await self.stub.Showdown(request, timeout=self.timeout, wait_for_ready=True)
            except grpc.aio.AioRpcError as err:
                if err.code() not in RETRIED or time.monotonic() >= give_up:
                    raise
                metrics.SHOWDOWN_RETRIES.inc()
            await asyncio.sleep(min(0.5, max(0.0, give_up - time.monotonic())))

    async def close(self) -> None:
        if self.channel is not None:
            await self.channel.close()
