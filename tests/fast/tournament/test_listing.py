"""ListTournaments in pages (services/tournament/listing.py).

The tournaments over (FINISHED, CANCELLED) are listed when their status is asked for, and they grow with
every tournament ever run: the answer was one message holding all of them, some 150 B each, so past about
27,000 it no longer fit gRPC's 4 MB and every such call failed. They now come in pages by tournament id;
the lobby of what is in play is listed whole unless a page is asked for."""

from __future__ import annotations

from typing import Any

import grpc
import pytest

from cardroom.v1 import tournament_pb2 as pb
from tests.fast.tournament.conftest import Room, run_async, sng
from tests.fast.tournament.test_service import Aborted, Context
from tournament.listing import DEFAULT_PAGE, MAX_PAGE
from tournament.service import TournamentService
from tournament.store import TournamentStore

GRPC_MAX_MESSAGE = 4 * 1024 * 1024  # grpc's default receive limit


def over(tid: str, status: int = pb.TOURNAMENT_STATUS_FINISHED, fmt: int = pb.TOURNAMENT_FORMAT_SNG) -> bytes:
    """A forgotten tournament's record, the size of a sit & go's (~150 B)."""
    info = pb.TournamentInfo(
        tournament_id=tid,
        name=f"Sit & Go {tid} - No Limit Hold'em, 6 players",
        format=fmt,
        variant="NT",
        status=status,
        buy_in=1000,
        fee=100,
        starting_stack=1500,
        entrants=6,
        prize_pool=6000,
        collected=6000,
        prize_pool_final=True,
        payouts=[3900, 2100],
        results=[
            pb.TournamentPlacement(player_id=f"p{i}-{tid}", place=i + 1, prize=(3900, 2100)[i] if i < 2 else 0)
            for i in range(6)
        ],
    )
    return info.SerializeToString()


def kept(store: TournamentStore, *records: bytes) -> None:
    """Forgotten tournaments' records put in the store's ``finished`` as ``forget`` leaves them (the lobby's
    answer, its status and format), thousands in one transaction."""
    rows = [(i.tournament_id, r, i.status, i.format) for r in records if (i := pb.TournamentInfo.FromString(r))]
    with store._lock:
        store._db.execute("BEGIN")
        store._db.executemany(
            "INSERT INTO finished (tournament_id, at, info, detail, status, format) VALUES (?, 0, ?, '{}', ?, ?)", rows
        )
        store._db.execute("COMMIT")


async def listed(service: TournamentService, **asked: Any) -> pb.ListTournamentsResponse:
    return await service.ListTournaments(pb.ListTournamentsRequest(**asked), Context())  # type: ignore[arg-type]


async def every_page(service: TournamentService, **asked: Any) -> tuple[list[str], int]:
    """The ids of every page followed to the last, and how many pages."""
    seen: list[str] = []
    token, pages = "", 0
    while True:
        reply = await listed(service, page_token=token, **asked)
        seen += [i.tournament_id for i in reply.tournaments]
        pages += 1
        token = reply.next_page_token
        if not token:
            return seen, pages


@run_async
async def test_the_tournaments_over_come_in_pages_that_fit_a_message(room: Room) -> None:
    kept(room.house.store, *(over(f"f{n:05d}") for n in range(30_000)))
    assert 30_000 * len(over("f00000")) > GRPC_MAX_MESSAGE  # all of them in one answer: refused
    service = TournamentService(room.house)
    first = await listed(service, status=pb.TOURNAMENT_STATUS_FINISHED)
    assert len(first.tournaments) == DEFAULT_PAGE and first.next_page_token
    assert first.ByteSize() < GRPC_MAX_MESSAGE
    big = await listed(service, status=pb.TOURNAMENT_STATUS_FINISHED, page_size=50_000)
    assert len(big.tournaments) == MAX_PAGE and big.ByteSize() < GRPC_MAX_MESSAGE
    seen, pages = await every_page(service, status=pb.TOURNAMENT_STATUS_FINISHED, page_size=MAX_PAGE)
    assert seen == [f"f{n:05d}" for n in range(30_000)] and pages == 30


@run_async
async def test_pages_list_each_tournament_once_by_id_with_the_status_asked(room: Room) -> None:
    kept(room.house.store, over("m-3"), over("a-1"), over("k-2"), over("c-9", pb.TOURNAMENT_STATUS_CANCELLED))
    await room.house.create(sng("b-live"))
    await room.house.create(sng("z-live"))
    service = TournamentService(room.house)

    assert await every_page(service, status=pb.TOURNAMENT_STATUS_FINISHED, page_size=2) == (["a-1", "k-2", "m-3"], 2)
    assert await every_page(service, status=pb.TOURNAMENT_STATUS_CANCELLED) == (["c-9"], 1)
    # the lobby (no status): what is in play, whole as before, or in pages when asked
    whole = await listed(service)
    assert sorted(i.tournament_id for i in whole.tournaments) == ["b-live", "z-live"] and not whole.next_page_token
    assert await every_page(service, page_size=1) == (["b-live", "z-live"], 2)
    assert await every_page(service, status=pb.TOURNAMENT_STATUS_REGISTRATION, page_size=1) == (["b-live", "z-live"], 2)


@run_async
async def test_a_bad_page_size_or_token_is_refused(room: Room) -> None:
    service = TournamentService(room.house)
    for asked, field in (({"page_size": -1}, "page_size"), ({"page_token": "not a token!"}, "page_token")):
        with pytest.raises(Aborted) as refused:
            await listed(service, status=pb.TOURNAMENT_STATUS_FINISHED, **asked)
        assert refused.value.code == grpc.StatusCode.INVALID_ARGUMENT and field in refused.value.details
