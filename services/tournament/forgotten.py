"""A tournament over (finished or cancelled), all its money paid, once its retention window passed:
what is kept of it when its :class:`~tournament.runner.Runner` goes (the house's periodic pass and
the tables no longer carry it, a restart does not replay it). It is kept in the store only
(``finished``, :meth:`~tournament.store.TournamentStore.forget`); the house's memory holds nothing of
it, each answer about it reads its row:

* its last lobby answer (``TournamentInfo``, serialized: a few hundred bytes for a sit & go, its
  results and payouts included), its status and format beside it — GetTournament and
  ListTournaments (a page by status and id) answer it as they did, a start counts the rows by
  format and status (``tournament_tournaments``);
* every entrant's last status (GetPlayerStatus) and the refusals the tournament gave (Register,
  Unregister, Rebuy, AddOn): over, a tournament refuses each the same way for every entrant, and the
  same way for everyone else, so one of each is kept.

A request id it answered before is answered again from the ``requests`` rows, as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import grpc

from cardroom.core.tournament import TournamentError
from cardroom.runtime import errors
from cardroom.runtime.errors import ServiceError
from cardroom.v1 import tournament_pb2 as pb
from tournament import lobby
from tournament.refusals import refusal
from tournament.runner import Runner

#: Stands for the player in a kept refusal's message (also the stranger's id it is asked for).
PLAYER = "{player}"
#: The paid and unpaid commands a player sends about a tournament.
OPS = ("register", "unregister", "rebuy", "add_on")


def _verifiers(runner: Runner) -> dict[str, Callable[[str, float], None]]:
    t = runner.t
    return {
        "register": t.verify_register,
        "unregister": t.verify_unregister,
        "rebuy": t.verify_rebuy,
        "add_on": t.verify_add_on,
    }


def kept_refusals(runner: Runner, now: float) -> dict[str, list[str]]:
    """``"op:entrant"`` / ``"op:stranger"`` -> [status code name, reason, message with :data:`PLAYER`]:
    what the core refuses, asked for one entrant and for a stranger. Over, none of the core's checks
    looks further than whether the player entered (every period, window and deadline is closed)."""
    sample = next(iter(runner.t.entrants), None)
    kept: dict[str, list[str]] = {}
    for op, verify in _verifiers(runner).items():
        for who, player in (("entrant", sample), ("stranger", PLAYER)):
            if player is None:
                continue
            try:
                verify(player, now)
            except TournamentError as exc:
                err = refusal(exc, op)
                kept[f"{op}:{who}"] = [err.code.name, err.reason, err.message.replace(player, PLAYER, 1)]
    return kept


def record(runner: Runner, now: float, players: dict[str, dict[str, Any]]) -> tuple[bytes, dict[str, Any]]:
    """(its last lobby answer serialized, the store's detail: ``players`` and the kept refusals). Over,
    the lobby answer no longer moves with the clock (no level, break or standings)."""
    info = lobby.info(runner, now).SerializeToString()
    return info, {"players": players, "refusals": kept_refusals(runner, now)}


def refused(detail: dict[str, Any], info: pb.TournamentInfo, op: str, player: str) -> ServiceError:
    """The refusal the tournament gave ``player`` for ``op`` before it was forgotten."""
    who = "entrant" if player in detail.get("players", {}) else "stranger"
    kept = detail.get("refusals", {}).get(f"{op}:{who}")
    if kept is None:  # not kept (none expected): the tournament is over all the same
        return over(info)
    code, reason, message = kept
    return ServiceError(grpc.StatusCode[code], message.replace(PLAYER, player, 1), reason=reason)


def over(info: pb.TournamentInfo) -> ServiceError:
    """What cancelling a tournament over answers (its status named)."""
    status = lobby.status_name(info.status)
    return errors.precondition(f"tournament_id: {info.tournament_id} is {status}", "TOURNAMENT_OVER")


__all__ = ["OPS", "PLAYER", "kept_refusals", "over", "record", "refused"]
