"""A CreateTournament request -> the core's :class:`TournamentConfig` (checked: a bad field is
INVALID_ARGUMENT naming it, nothing created)."""

from __future__ import annotations

from dataclasses import replace

from cardroom.core import ids
from cardroom.core.engine import Variant
from cardroom.core.tournament import (
    AddOnRules,
    BreakSchedule,
    Format,
    Level,
    LevelStructure,
    RebuyRules,
    SatelliteRules,
    TournamentConfig,
    tournament_config,
)
from cardroom.core.tournament.structure import standard_structure
from cardroom.runtime import errors
from cardroom.v1 import tournament_pb2 as pb

FORMATS: dict[int, Format] = {
    pb.TOURNAMENT_FORMAT_UNSPECIFIED: Format.MTT,
    pb.TOURNAMENT_FORMAT_MTT: Format.MTT,
    pb.TOURNAMENT_FORMAT_SNG: Format.SNG,
    pb.TOURNAMENT_FORMAT_REBUY: Format.REBUY,
    pb.TOURNAMENT_FORMAT_SATELLITE: Format.SATELLITE,
    pb.TOURNAMENT_FORMAT_FREEROLL: Format.FREEROLL,
    pb.TOURNAMENT_FORMAT_HEADS_UP: Format.HEADS_UP,
    pb.TOURNAMENT_FORMAT_SHOOTOUT: Format.SHOOTOUT,
}
FORMAT_PROTO = {f: k for k, f in FORMATS.items() if k != pb.TOURNAMENT_FORMAT_UNSPECIFIED}
MAX_CENTS = 10**12
MAX_CHIPS = 10**12


def _check(ok: bool, message: str) -> None:
    if not ok:
        raise errors.invalid(message)


#: A level's amounts, by the same names in ``TournamentLevel`` and the core's ``Level``.
_LEVEL_AMOUNTS = ("small_blind", "big_blind", "ante", "small_bet", "big_bet", "bring_in")


def _structure(req: pb.CreateTournamentRequest, variant: Variant, stack: int) -> LevelStructure:
    every = req.break_every_seconds or 3600.0
    length = req.break_seconds or 300.0
    _check(0 < length < every, "break_seconds: a break is shorter than the time between breaks")
    breaks = BreakSchedule(True, every, length)
    if req.levels:
        levels = []
        for i, lv in enumerate(req.levels):
            _check(lv.seconds > 0, f"levels[{i}].seconds: a level lasts a positive number of seconds")
            amounts = {name: getattr(lv, name) for name in _LEVEL_AMOUNTS}
            for name, chips in amounts.items():
                _check(0 <= chips <= MAX_CHIPS, f"levels[{i}].{name}: 0 to {MAX_CHIPS} chips")
            level = Level(**amounts, seconds=lv.seconds)
            try:
                level.verify(variant)
            except ValueError as exc:
                raise errors.invalid(f"levels[{i}]: {exc}") from None
            levels.append(level)
        return LevelStructure(tuple(levels), breaks)
    seconds = req.level_seconds or 600.0
    _check(seconds > 0, "level_seconds: a level lasts a positive number of seconds")
    return replace(standard_structure(variant, stack, level_seconds=seconds), breaks=breaks)


def config_from_request(
    req: pb.CreateTournamentRequest, now: float, target_entry: int | None = None
) -> TournamentConfig:
    """The tournament's settings; ``now`` is the service clock (the scheduled start is now +
    ``start_in_seconds``); ``target_entry``: a satellite target's buy-in + fee when it is here."""
    ids.verify_tournament_id(req.tournament_id)
    _check(req.format in FORMATS, f"format: unknown tournament format {req.format}")
    fmt = FORMATS[req.format]
    try:
        variant = Variant.parse(req.variant or "NT")
    except ValueError as exc:
        raise errors.invalid(f"variant: {exc}") from None
    _check(0 <= req.buy_in <= MAX_CENTS, f"buy_in: 0 to {MAX_CENTS} cents")
    _check(0 <= req.fee <= MAX_CENTS, f"fee: 0 to {MAX_CENTS} cents")
    _check(0 <= req.guarantee <= MAX_CENTS, f"guarantee: 0 to {MAX_CENTS} cents")
    stack = req.starting_stack or 1500
    _check(0 < stack <= MAX_CHIPS, f"starting_stack: 1 to {MAX_CHIPS} chips")
    _check(req.min_entrants >= 0 and req.max_entrants >= 0, "max_entrants: not negative")
    _check(req.start_in_seconds >= 0, "start_in_seconds: not negative")
    _check(req.seats == 0 or 2 <= req.seats <= 10, "seats: 2 to 10 players per table")
    _check(req.action_seconds >= 0 and req.hand_interval_seconds >= 0, "action_seconds: not negative")
    sng = fmt in (Format.SNG,) or (fmt is Format.HEADS_UP and req.max_entrants == 2)
    if sng:
        _check(req.max_entrants >= 2, "max_entrants: a Sit & Go starts when this many are registered (2 or more)")
    entrants = req.max_entrants or 2
    overrides: dict[str, object] = {"name": req.name or req.tournament_id, "structure": _structure(req, variant, stack)}
    if req.seats:
        overrides["seat_count"] = req.seats
    if req.max_entrants:
        overrides["max_entrants"] = req.max_entrants
    if req.min_entrants:
        overrides["min_entrants"] = req.min_entrants
    if not sng:
        overrides["start_at"] = now + req.start_in_seconds
    if req.HasField("late_registration_seconds"):
        _check(req.late_registration_seconds >= 0, "late_registration_seconds: not negative")
        overrides["late_registration_seconds"] = req.late_registration_seconds
    if req.HasField("unregister_before_seconds"):
        _check(req.unregister_before_seconds >= 0, "unregister_before_seconds: not negative")
        overrides["unregister_before_seconds"] = req.unregister_before_seconds
    if req.action_seconds:
        overrides["action_seconds"] = req.action_seconds
    if req.extra_time_when_disconnected:
        overrides["extra_time_when_disconnected"] = True
    if req.guarantee:
        overrides["guarantee"] = req.guarantee
    if fmt is Format.REBUY:
        _check(req.max_rebuys >= 0 and req.rebuy_seconds >= 0, "max_rebuys: not negative")
        overrides["rebuys"] = RebuyRules(max_rebuys=req.max_rebuys or None, period_seconds=req.rebuy_seconds or None)
        overrides["add_on"] = AddOnRules()
    if fmt is Format.SATELLITE:
        seat = req.satellite_seat_value or target_entry or 10 * req.buy_in
        _check(seat > 0, "satellite_seat_value: a seat is worth something")
        overrides["satellite"] = SatelliteRules(seat_value=seat, target=req.satellite_target)
    try:
        cfg = tournament_config(
            fmt, variant, entrants, buy_in=req.buy_in, fee=req.fee, starting_stack=stack, **overrides
        )
        if fmt is Format.FREEROLL:
            cfg = replace(cfg, buy_in=0, fee=0, guarantee=req.guarantee or cfg.guarantee)
    except ValueError as exc:
        raise errors.invalid(f"format: {exc}") from None
    if cfg.max_entrants is not None:
        _check(cfg.max_entrants >= cfg.min_entrants, "max_entrants: at least min_entrants")
    return cfg


__all__ = ["FORMATS", "FORMAT_PROTO", "TournamentConfig", "config_from_request"]
