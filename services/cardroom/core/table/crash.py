"""What the dealer does after a server crash (rules/003 'Server Crash', rules/000).

* **Cash game** (rules/003): the hand in progress is cancelled and every chip in the pot is
  returned to the player who put it in — every stack is as at the hand's start — and the
  table is closed: each seated player's chips go back to his account.
* **Tournament** (rules/000): the hand in progress is rolled back — every chip count is
  reset to the amount at the beginning of the hand — and play continues with that hand
  dealt again (same button, same forced bets; the dealer supplies a new deck order).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from cardroom.core.table.settings import GameKind


@dataclass(frozen=True, slots=True)
class CrashRecovery:
    """The outcome of a crash.

    ``stacks``: seat -> chips after recovery; ``refunds``: seat -> chips given back from the
    cancelled pot; ``to_accounts``: player id -> chips returned to the account (cash games;
    empty for tournaments); ``close_table`` / ``replay_hand`` as the rules say.
    """

    kind: GameKind
    stacks: dict[int, int]
    refunds: dict[int, int]
    to_accounts: dict[str, int]
    close_table: bool
    replay_hand: bool


def recover_from_crash(
    kind: GameKind,
    players: Mapping[int, str],
    starting_stacks: Mapping[int, int],
    current_stacks: Mapping[int, int] | None = None,
) -> CrashRecovery:
    """Recover a table whose hand was interrupted.

    ``players``: seat -> player id of everyone seated; ``starting_stacks``: seat -> chips at
    the start of the interrupted hand (players not dealt in keep their stack: give it too);
    ``current_stacks``: seat -> chips behind at the crash (to compute the refunds; defaults
    to the starting stacks, i.e. nothing was put in yet).
    """
    if set(starting_stacks) - set(players):
        raise ValueError("every starting stack needs its seated player")
    current = dict(starting_stacks if current_stacks is None else current_stacks)
    refunds: dict[int, int] = {}
    for seat, start in starting_stacks.items():
        now = current.get(seat, start)
        if now > start:
            raise ValueError(f"seat {seat} has more chips ({now}) than at the hand's start ({start})")
        refunds[seat] = start - now
    stacks = dict(starting_stacks)
    if kind is GameKind.CASH:
        to_accounts = {players[seat]: chips for seat, chips in stacks.items()}
        return CrashRecovery(kind, stacks, refunds, to_accounts, close_table=True, replay_hand=False)
    return CrashRecovery(kind, stacks, refunds, {}, close_table=False, replay_hand=True)
