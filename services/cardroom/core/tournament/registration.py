"""Registration rules (rules/000 'Tournament Rules', glossary 'Buy-in'): pure checks that return
the reason a registration or unregistration is refused, or None.

* 'Tournament seats are available on a first come first serve basis' (up to the maximum).
* Late registration: 'Registration will terminate if all tables allocated at the time of
  seating are full, or once the first player is eliminated. Late registration is usually
  available for 10 minutes after the tournament start.' (The tournament closes it on the
  first elimination; here: the time and the free seats.)
* Unregistration: 'a player can unregister until ten minutes prior to the start of the event.
  Players who have won their seats through a satellite cannot unregister'.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class RegistrationState:
    """What the checks need to know about the tournament now."""

    registered: int
    maximum: int | None
    started: bool
    running: bool
    late_open: bool
    elapsed: float
    late_seconds: float
    free_seats: int


def registration_refusal(already: bool, state: RegistrationState) -> str | None:
    if already:
        return "already registered"
    if state.maximum is not None and state.registered >= state.maximum:
        return "the tournament is full"
    if not state.started:
        return None
    if not state.running or not state.late_open:
        return "registration is closed"
    if state.elapsed >= state.late_seconds:
        return "late registration is over"
    if state.free_seats == 0:
        return "every table is full"
    return None


def unregistration_refusal(
    *, started: bool, via_satellite: bool, now: float, start_at: float | None, before_seconds: float
) -> str | None:
    if started:
        return "the tournament has started"
    if via_satellite:
        return "a seat won in a satellite cannot be unregistered"
    if start_at is not None and now > start_at - before_seconds:
        return "the unregistration deadline has passed"
    return None


__all__ = ["RegistrationState", "registration_refusal", "unregistration_refusal"]
