"""A forgotten tournament's record is in the store only (services/tournament/store.py, ``finished``): the
house keeps nothing in memory per tournament it forgot — it kept each one's last lobby answer in a map
loaded at every start and sorted at each page of the tournaments over, so its memory and each history
page grew with every tournament ever run — and every answer about them stays what it was, a restart
included. An older store's ``finished`` gets its status and format columns at open."""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Sized
from pathlib import Path
from typing import Any

from cardroom.v1 import tournament_pb2 as pb
from tests.fast.tournament.conftest import Room, run_async, sng
from tests.fast.tournament.test_forget_finished import WINDOW, answers, finished_sng, refusals
from tests.fast.tournament.test_listing import every_page, over
from tests.fast.tournament.test_service import Context
from tournament import metrics
from tournament.house import TournamentHouse
from tournament.service import TournamentService
from tournament.store import TournamentStore

GONE = [f"gone-{n:03d}" for n in range(40)]  # more than the house holds of anything else
#: ``finished`` as the store made it before it had ``status`` and ``format``.
OLD_FINISHED = (
    "CREATE TABLE finished (tournament_id TEXT PRIMARY KEY, at REAL NOT NULL, info BLOB NOT NULL, detail TEXT NOT NULL)"
)
FINISHED, CANCELLED = pb.TOURNAMENT_STATUS_FINISHED, pb.TOURNAMENT_STATUS_CANCELLED
SNG, MTT = pb.TOURNAMENT_FORMAT_SNG, pb.TOURNAMENT_FORMAT_MTT


async def cancelled(room: Room, tid: str) -> None:
    """A multi-table event far from its start, cancelled with no entrant: over, nothing owed."""
    await room.house.create(sng(tid, format=MTT, start_in_seconds=600, max_entrants=0))
    await room.house.cancel(tid, "c0")


def held_per_tournament(house: TournamentHouse) -> dict[str, int]:
    """The house's collections (maps, sets, lists) holding an entry per forgotten tournament or more."""
    return {
        name: len(value)
        for name, value in vars(house).items()
        if isinstance(value, Sized) and not isinstance(value, str | bytes) and len(value) >= len(GONE)
    }


async def everything(service: TournamentService) -> dict[str, Any]:
    """What clients read: each tournament's lobby answer, every page of the tournaments over, the
    sit & go's players and refusals, a cancelled one's refusals and its cancel asked again."""
    ctx: Any = Context()
    return {
        "infos": [await service.GetTournament(pb.GetTournamentRequest(tournament_id=t), ctx) for t in GONE],
        "cancelled": await every_page(service, status=CANCELLED, page_size=7),
        "finished": await every_page(service, status=FINISHED),
        "first": await service.ListTournaments(pb.ListTournamentsRequest(status=CANCELLED, page_size=5), ctx),
        "sng": await answers(service, "sng1"),
        "refused": await refusals(service, "sng1") + await refusals(service, GONE[0]),
        "cancel": await service.house.cancel(GONE[0], "c0"),
    }


@run_async
async def test_a_restart_holds_nothing_per_forgotten_tournament_and_answers_the_same(room: Room) -> None:
    await finished_sng(room)
    for tid in GONE:
        await cancelled(room, tid)
    room.clock.advance(WINDOW)
    await room.house.step()
    await cancelled(room, "gone-015a")  # over within its window, in the house: listed among the forgotten
    await room.house.step()
    assert held_per_tournament(room.house) == {}
    assert list(room.house.runners) == ["gone-015a"] and room.house.forgotten_count() == len(GONE) + 1
    before = await everything(TournamentService(room.house))
    assert before["cancelled"] == (sorted([*GONE, "gone-015a"]), 6) and before["finished"] == (["sng1"], 1)
    assert before["cancel"]["replayed"]
    counted = metrics.TOURNAMENTS.labels("cancelled", "mtt")._value.get()

    house = room.reopen()
    await house.recover()
    assert list(house.runners) == ["gone-015a"] and held_per_tournament(house) == {}
    assert not hasattr(house, "records")  # no record of a forgotten tournament is loaded
    assert house.is_forgotten("sng1") and not house.is_forgotten("gone-015a") and not house.is_forgotten("nope")
    assert metrics.TOURNAMENTS.labels("cancelled", "mtt")._value.get() == counted + len(GONE)  # counted at start
    assert await everything(TournamentService(house)) == before


def old_store(path: Path, records: list[bytes]) -> None:
    """A store file whose ``finished`` has the old columns only, holding ``records``."""
    with contextlib.closing(sqlite3.connect(path)) as db:
        db.execute(OLD_FINISHED)
        rows = [(pb.TournamentInfo.FromString(r).tournament_id, float(n), r, "{}") for n, r in enumerate(records)]
        db.executemany("INSERT INTO finished VALUES (?, ?, ?, ?)", rows)
        db.commit()


def pages(store: TournamentStore, status: int, size: int) -> list[list[str]]:
    """Every page of the forgotten tournaments with ``status``, each a list of ids."""
    out: list[list[str]] = []
    after = ""
    while page := [pb.TournamentInfo.FromString(r).tournament_id for r in store.forgotten_page(status, after, size)]:
        out.append(page)
        after = page[-1]
    return out


def steps(store: TournamentStore, call: Callable[[], object]) -> int:
    """How many SQLite virtual machine instructions ``call`` runs on the store's connection."""
    count = 0

    def counted() -> int:
        nonlocal count
        count += 1
        return 0

    store._db.set_progress_handler(counted, 1)
    try:
        call()
    finally:
        store._db.set_progress_handler(None, 1)
    return count


def test_an_older_store_gets_status_and_format_at_open_and_pages_by_status(tmp_path: Path) -> None:
    path = tmp_path / "tournament.sqlite3"
    ids = [f"t{(n * 7919) % 3000:04d}" for n in range(3000)]  # stored out of id order
    status = {tid: CANCELLED if n % 3 == 0 else FINISHED for n, tid in enumerate(ids)}
    fmt = {tid: MTT if n % 2 else SNG for n, tid in enumerate(ids)}
    old_store(path, [over(tid, status[tid], fmt[tid]) for tid in ids])

    for _ in range(2):  # opened again: left as it is
        store = TournamentStore(path)
        assert store.forgotten_count() == 3000
        assert sorted(store.forgotten_counts()) == sorted(
            [(SNG, CANCELLED, 500), (SNG, FINISHED, 1000), (MTT, CANCELLED, 500), (MTT, FINISHED, 1000)]
        )
        assert store.forgotten_info("t0042") == over("t0042", status["t0042"], fmt["t0042"])
        assert store.is_forgotten("t0042") and not store.is_forgotten("t9999") and store.forgotten_info("t9999") is None
        for asked in (FINISHED, CANCELLED):
            listed = pages(store, asked, 70)
            assert [tid for page in listed for tid in page] == sorted(t for t in ids if status[t] == asked)
            assert max(len(page) for page in listed) == 70
        store.close()

    store = TournamentStore(path)
    whole = steps(store, store.forgotten_counts)  # every row read: a step or more each
    page = steps(store, lambda: store.forgotten_page(FINISHED, "t1500", 11))
    assert whole >= 3000 and page < 300  # a page reads its rows only, by the index on status and id
    store.close()
