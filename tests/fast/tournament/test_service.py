"""The gRPC servicer in-process: operator calls guarded by TOURNAMENT_OPERATOR_TOKEN when it is set,
refusals as precise statuses with the rich details (a fake servicer context)."""

from __future__ import annotations

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2

from cardroom.core import ids
from cardroom.v1 import tournament_pb2 as pb
from tests.fast.tournament.conftest import Room, run_async, sng
from tournament.service import TournamentService


class Aborted(Exception):
    def __init__(self, code: grpc.StatusCode, details: str, trailers: tuple) -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.trailers = trailers

    @property
    def reason(self) -> str:
        for key, value in self.trailers:
            if key == "grpc-status-details-bin":
                for detail in status_pb2.Status.FromString(value).details:
                    info = error_details_pb2.ErrorInfo()
                    if detail.Unpack(info):
                        return info.reason
        return ""


class Context:
    def __init__(self, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        self.metadata = metadata

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return self.metadata

    async def abort(self, code: grpc.StatusCode, details: str, trailers: tuple) -> None:
        raise Aborted(code, details, trailers)


@run_async
async def test_operator_calls_need_the_operator_token_when_it_is_set(room: Room) -> None:
    service = TournamentService(room.house, operator_token="s3cret")
    with pytest.raises(Aborted) as caught:
        await service.CreateTournament(sng(), Context())  # type: ignore[arg-type]
    assert (caught.value.code, caught.value.reason) == (grpc.StatusCode.PERMISSION_DENIED, "OPERATOR_ONLY")
    with pytest.raises(Aborted):
        await service.CreateTournament(sng(), Context((("authorization", "Operator wrong"),)))  # type: ignore[arg-type]
    assert "sng1" not in room.house.runners
    info = await service.CreateTournament(sng(), Context((("authorization", "Operator s3cret"),)))  # type: ignore[arg-type]
    assert info.status == pb.TOURNAMENT_STATUS_REGISTRATION and info.max_entrants == 6
    with pytest.raises(Aborted) as caught:
        await service.CancelTournament(pb.CancelTournamentRequest(tournament_id="sng1"), Context())  # type: ignore[arg-type]
    assert caught.value.code == grpc.StatusCode.PERMISSION_DENIED


@run_async
async def test_refusals_reach_the_client_with_their_reason(room: Room) -> None:
    service = TournamentService(room.house)
    await service.CreateTournament(sng(), Context())  # type: ignore[arg-type]
    with pytest.raises(Aborted) as caught:
        await service.GetPlayerStatus(
            pb.GetTournamentPlayerRequest(tournament_id="sng1", player_id="nobody"),
            Context(),  # type: ignore[arg-type]
        )
    assert (caught.value.code, caught.value.reason) == (grpc.StatusCode.NOT_FOUND, "NOT_REGISTERED")
    with pytest.raises(Aborted) as caught:
        await service.Register(pb.TournamentEntryRequest(tournament_id="sng1", player_id="ann"), Context())  # type: ignore[arg-type]
    assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT and "request_id" in caught.value.details
    listed = await service.ListTournaments(pb.ListTournamentsRequest(), Context())  # type: ignore[arg-type]
    assert [t.tournament_id for t in listed.tournaments] == ["sng1"]


@run_async
async def test_a_players_status_names_his_tables_id_as_the_dealer_does(room: Room) -> None:
    """Clients open the table the status names (``table_id``) and never build one."""
    service = TournamentService(room.house)
    await service.CreateTournament(sng(players=2), Context())  # type: ignore[arg-type]
    room.fund("ann", "bob")
    for p in ("ann", "bob"):
        entry = await service.Register(
            pb.TournamentEntryRequest(tournament_id="sng1", player_id=p, request_id=f"r-{p}"),
            Context(),  # type: ignore[arg-type]
        )
    assert entry.status.table == 1 and entry.status.table_id == ids.tournament_table_id("sng1", 1)
    await room.play("sng1")
    done = await service.GetPlayerStatus(
        pb.GetTournamentPlayerRequest(tournament_id="sng1", player_id="ann"),
        Context(),  # type: ignore[arg-type]
    )
    assert done.table == 0 and done.table_id == "" and done.place in (1, 2)
