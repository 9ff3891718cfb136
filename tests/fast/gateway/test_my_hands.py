"""Fast tier: ``Gateway/MyHands`` asks the dealer for the token's own player only (issue 12: "a
gateway call for a player's own recent hands") and joins the PokerStars text oldest first."""

from __future__ import annotations

import grpc

from cardroom.runtime import errors
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g, gateway_pb2_grpc as g_grpc
from tests.fast.gateway.fakes import FakeDealer, backends
from tests.fast.gateway.test_gateway_service import auth, failure, run


def test_my_hands_are_the_token_s_own_and_export_as_one_pokerstars_file() -> None:
    newest = d.RecentHand(hand_id="t1-2", player_id="ann", pokerstars="PokerStars Hand #2: ...")
    oldest = d.RecentHand(hand_id="t1-1", player_id="ann", pokerstars="PokerStars Hand #1: ...")
    dealer = FakeDealer(answers={"PlayerHands": [d.PlayerHandsResponse(hands=[newest, oldest])]})

    async def scenario(stub: g_grpc.GatewayStub, _: g_grpc.GatewayOperatorStub) -> None:
        reply = await stub.MyHands(g.MyHandsRequest(limit=5), metadata=auth("ann"))
        method, request = dealer.calls[-1]
        assert (method, request.player_id, request.limit) == ("PlayerHands", "ann", 5)
        assert [h.hand_id for h in reply.hands] == ["t1-2", "t1-1"] and reply.pokerstars == ""
        reply = await stub.MyHands(g.MyHandsRequest(format=g.HANDS_FORMAT_POKERSTARS), metadata=auth("ann"))
        assert reply.pokerstars == "PokerStars Hand #1: ...\n\n\nPokerStars Hand #2: ...\n"
        calls = len(dealer.calls)
        # another player's hands: refused at the gateway, the dealer is never asked
        err = await failure(stub.MyHands(g.MyHandsRequest(player_id="bob"), metadata=auth("ann")))
        assert (err.code(), errors.reason_of(err)) == (grpc.StatusCode.PERMISSION_DENIED, "OTHER_PLAYER")
        err = await failure(stub.MyHands(g.MyHandsRequest()))
        assert err.code() == grpc.StatusCode.UNAUTHENTICATED
        err = await failure(stub.MyHands(g.MyHandsRequest(limit=-1), metadata=auth("ann")))
        assert err.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert len(dealer.calls) == calls

    run(backends(dealer), scenario)
