"""Fast tier: following a player through his tournament (``cardroom.client.tournament_seat``, issue
15: "`cardroom play` can ... play its tournament table (moved automatically when the table breaks)"),
the one logic of ``cardroom play`` and ``cardroom bots --tournament``."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from cardroom.client import tournament_seat
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g, tournament_pb2 as t


def status(state: str, table: int = 0, seat: int = 0, place: int = 0) -> t.TournamentPlayerStatus:
    return t.TournamentPlayerStatus(
        tournament_id="sng-1", player_id="ann", status=state, table=table, seat=seat, place=place
    )


def test_the_player_is_followed_to_his_next_table_and_to_his_place() -> None:
    answers = [
        status("registered"),  # before the start: no table yet
        status("active", 1, 3),
        status("active", 1, 3),  # just moved: the service does not know yet, not the same table again
        status("active", 0, 0),  # between two tables
        status("active", 2, 5),
        status("busted", 0, 0, place=4),
    ]
    asked, played, waited = [], [], []

    async def status_of() -> t.TournamentPlayerStatus:
        asked.append(1)
        return answers[len(asked) - 1]

    async def play_at(s: t.TournamentPlayerStatus) -> bool:
        played.append((tournament_seat.table_id(s), s.seat))
        return True  # he left the table: moved out, then busted

    last = asyncio.run(tournament_seat.follow(status_of, play_at, lambda s: waited.append(s.status), poll=0))
    assert played == [("tt.sng-1.1", 3), ("tt.sng-1.2", 5)]
    assert waited == ["registered", "active", "active"]
    assert last is not None and last.place == 4 and tournament_seat.is_done(last)


def test_a_table_not_open_yet_is_looked_up_again_and_the_person_may_stop_following() -> None:
    answers = iter([status("active", 1, 2), status("active", 1, 2), status("active", 1, 2)])
    played: list[int] = []

    async def play_at(s: t.TournamentPlayerStatus) -> bool | None:
        played.append(s.table)
        return False if len(played) == 1 else None  # the stream failed, then he typed 'leave'

    async def status_of() -> t.TournamentPlayerStatus:
        return next(answers)

    assert asyncio.run(tournament_seat.follow(status_of, play_at, poll=0)) is None
    assert played == [1, 1]  # the same seat again after a failed stream (not taken for a move)


def test_what_takes_the_player_away_from_his_table() -> None:
    def changed(player: str, change: str) -> d.TableEvent:
        return d.TableEvent(seat_changed=d.SeatChanged(seat=d.SeatView(seat=1, player_id=player), change=change))

    assert tournament_seat.leaves(changed("ann", "moved_out"), "ann") == "moved_out"
    assert tournament_seat.leaves(changed("ann", "busted"), "ann") == "busted"
    assert tournament_seat.leaves(changed("bob", "moved_out"), "ann") is None
    assert tournament_seat.leaves(changed("ann", "sat_out"), "ann") is None
    assert tournament_seat.leaves(d.TableEvent(table_closed=d.TableClosed(reason="broken")), "ann") == "table_closed"
    assert tournament_seat.stream_failed(g.PlayEvent(error=g.PlayError(request_id="open", code="NOT_FOUND")))
    assert not tournament_seat.stream_failed(
        g.PlayEvent(error=g.PlayError(request_id="r-1", code="FAILED_PRECONDITION"))
    )


def _failure(code: grpc.StatusCode) -> grpc.aio.AioRpcError:
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), grpc.aio.Metadata(), "the tournament service restarts")


def scripted(answers: list[object]) -> tournament_seat.StatusOf:
    """A status call answering ``answers`` in turn: a failure is raised, a status returned."""

    async def status_of() -> t.TournamentPlayerStatus:
        answer = answers.pop(0)
        if isinstance(answer, grpc.aio.AioRpcError):
            raise answer
        assert isinstance(answer, t.TournamentPlayerStatus)
        return answer

    return status_of


def test_a_status_unreachable_while_a_service_restarts_is_asked_again_not_given_up() -> None:
    """The 30-entrant test's kill -9 of the tournament service: a player between two tables asked his
    status while it restarted (longer than a few quick retries on a loaded machine) and the bot gave up.
    Transient failures are waited out (up to ``patience`` in a row); anything else is raised at once."""
    answers: list[object] = [
        _failure(grpc.StatusCode.UNAVAILABLE),
        _failure(grpc.StatusCode.DEADLINE_EXCEEDED),
        _failure(grpc.StatusCode.UNAVAILABLE),
        _failure(grpc.StatusCode.UNAVAILABLE),
        _failure(grpc.StatusCode.UNAVAILABLE),
        status("active", 2, 4),
    ]

    assert asyncio.run(tournament_seat.next_table(scripted(answers), poll=0)).table == 2

    async def refused() -> t.TournamentPlayerStatus:
        raise _failure(grpc.StatusCode.PERMISSION_DENIED)

    with pytest.raises(grpc.aio.AioRpcError):
        asyncio.run(tournament_seat.next_table(refused, poll=0))

    async def never() -> t.TournamentPlayerStatus:
        raise _failure(grpc.StatusCode.UNAVAILABLE)

    with pytest.raises(grpc.aio.AioRpcError):  # patience spent
        asyncio.run(tournament_seat.next_table(never, poll=0.01, patience=0.05))


def test_a_status_refused_as_over_the_rate_is_asked_again_after_the_pause() -> None:
    """The CI failure of the bots' sit & go: the winner's MyTournamentStatus, right after heads-up play
    at full speed, was refused as over the player's rate (RESOURCE_EXHAUSTED) and ended the bot."""
    answers: list[object] = [_failure(grpc.StatusCode.RESOURCE_EXHAUSTED), status("finished", place=1)]

    assert asyncio.run(tournament_seat.next_table(scripted(answers), poll=0)).place == 1


def test_a_table_stream_that_ends_at_once_is_opened_again_only_after_the_pause(monkeypatch: pytest.MonkeyPatch) -> None:
    """A table whose streams end at once (closed, its dealer draining) while the status still names
    it: before, the player asked for his status and opened the table again as fast as the gateway
    answered, spending his whole call budget (the 30-entrant test's RESOURCE_EXHAUSTED)."""
    steps: list[str] = []
    real_sleep = asyncio.sleep

    async def sleep(seconds: float) -> None:
        steps.append(f"wait {seconds}")
        await real_sleep(0)

    monkeypatch.setattr(tournament_seat.asyncio, "sleep", sleep)
    plays = 0

    async def status_of() -> t.TournamentPlayerStatus:
        steps.append("status")
        return status("active", 1, 2)

    async def play_at(s: t.TournamentPlayerStatus) -> bool | None:
        nonlocal plays
        plays += 1
        steps.append("play")
        return False if plays < 3 else None  # the stream ended without him leaving, twice

    assert asyncio.run(tournament_seat.follow(status_of, play_at, poll=0.3)) is None
    assert steps == ["status", "play", "wait 0.3", "status", "play", "wait 0.3", "status", "play"]
