"""The lobby's view of a tournament (``TournamentInfo``) and a player's own status."""

from __future__ import annotations

from math import comb
from typing import Any, cast

from cardroom.core import ids
from cardroom.core.tournament import Status
from cardroom.core.tournament.tournament import Tournament
from cardroom.v1 import tournament_pb2 as pb
from tournament.runner import Runner
from tournament.settings import FORMAT_PROTO, FORMATS

STATUS = {
    Status.REGISTRATION: pb.TOURNAMENT_STATUS_REGISTRATION,
    Status.RUNNING: pb.TOURNAMENT_STATUS_RUNNING,
    Status.FINISHED: pb.TOURNAMENT_STATUS_FINISHED,
    Status.CANCELLED: pb.TOURNAMENT_STATUS_CANCELLED,
}


def _clock(t: Tournament, now: float) -> tuple[float, float]:
    """(seconds to the next level, seconds to the next break or to the end of this one)."""
    if t.started_at is None or t.status is not Status.RUNNING:
        return 0.0, 0.0
    elapsed = now - t.started_at
    breaks = t._breaks  # noqa: SLF001 - the lobby reads the core's schedule
    play = elapsed - breaks.break_time_before(elapsed) - t._round_offset  # noqa: SLF001
    to_level = max(0.0, t.level.seconds - (play - t._level_started))  # noqa: SLF001
    if not breaks.enabled:
        return to_level, 0.0
    if t.on_break:
        end = t.break_ends_at()
        return to_level, max(0.0, (end or now) - now)
    k = int(elapsed // breaks.every_seconds) + 1
    return to_level, max(0.0, k * breaks.every_seconds - breaks.length_seconds - elapsed)


ICM_STATES = 20_000
"""The lobby's ICM budget: above it (many players, many places) the equities are left out."""


def _icm(t: Tournament, players: int) -> dict[str, float]:
    places = min(len(t.prize_table), players)
    if not t.pool_final or sum(comb(players, d) for d in range(places)) > ICM_STATES:
        return {}
    return t.icm()


def info(runner: Runner, now: float, *, standings: bool = True) -> pb.TournamentInfo:
    t, cfg, req = runner.t, runner.config, runner.request
    to_level, to_break = _clock(t, now)
    lv = t.level
    out = pb.TournamentInfo(
        tournament_id=runner.tournament_id,
        name=cfg.name,
        format=cast(Any, FORMAT_PROTO[FORMATS[req.format]]),
        variant=cfg.variant.code,
        status=STATUS[t.status],
        buy_in=cfg.buy_in,
        fee=cfg.fee,
        starting_stack=cfg.starting_stack,
        entrants=len(t.entrants),
        remaining=len(t.remaining()) if t.status is not Status.REGISTRATION else len(t.entrants),
        prize_pool=t.prize_pool,
        collected=t.collected,
        prize_pool_final=t.pool_final,
        payouts=list(t.prize_table),
        level=t.level_index + 1 if t.started_at is not None else 0,
        blinds=pb.TournamentLevel(
            small_blind=lv.small_blind,
            big_blind=lv.big_blind,
            ante=lv.ante,
            small_bet=lv.small_bet,
            big_bet=lv.big_bet,
            bring_in=lv.bring_in,
            seconds=lv.seconds,
        ),
        seconds_to_next_level=to_level,
        seconds_to_break=to_break,
        on_break=t.on_break,
        hand_for_hand=t.hand_for_hand,
        starts_at=cfg.start_at or 0.0,
        max_entrants=cfg.max_entrants or 0,
        guarantee=cfg.guarantee,
        satellite_target=cfg.satellite.target if cfg.satellite else "",
        rebuys=t.rebuys_sold,
        add_ons=t.add_ons_sold,
        cancellation_policy=t.cancellation.policy.value if t.cancellation is not None else "",
    )
    if t.status is Status.RUNNING:
        for number, table in sorted(t.tables.items()):
            out.tables.add(table=number, players=len(table.seating.seats), in_hand=table.in_hand)
        chips = {p: t.chips(p) for p in t.remaining()}
        if chips:
            out.chip_leader = max(chips, key=lambda p: (chips[p], -t.entrants[p].number))
        if standings:
            icm = _icm(t, len(chips))
            for p in sorted(chips, key=lambda p: (-chips[p], t.entrants[p].number)):
                out.standings.add(player_id=p, chips=chips[p], icm_equity=icm.get(p, 0.0))
    for r in runner.results:
        out.results.add(player_id=r.player, place=r.place, last_place=r.last_place, prize=r.prize, seat_won=r.seat)
    return out


def status_name(status: int) -> str:
    """The core's name of a lobby status (``finished``, ``cancelled`` ...)."""
    return next(s.value for s, proto in STATUS.items() if proto == status)


def player(tournament_id: str, player_id: str, status: dict[str, Any]) -> pb.TournamentPlayerStatus:
    """A player's status in ``tournament_id`` (:func:`tournament.house.player_status`'s fields: the
    runner's now, or a forgotten tournament's kept one)."""
    table = int(status.get("table") or 0)
    table_id = ids.tournament_table_id(tournament_id, table) if table else ""
    return pb.TournamentPlayerStatus(tournament_id=tournament_id, player_id=player_id, table_id=table_id, **status)


__all__ = ["STATUS", "info", "player", "status_name"]
