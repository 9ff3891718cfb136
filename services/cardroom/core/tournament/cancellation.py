"""The tournament cancellation policy of rules/000 ('Tournament Cancellation Policy').

Each policy is a function from the tournament's state at the interruption to payouts, in
integer cents, that pays out exactly the money it distributes (no cent created or lost):

* **Before the start** — 'all players will receive a refund of their full tournament
  registration fees ... in the exact manner that they were paid': every buy-in and fee
  goes back as the :class:`Payment` parts it was paid with (:func:`refund_before_start`).
* **50/50** (in progress, nobody in the money) — '50% of the prize pool to all remaining
  players and the other 50% ... proportionately based on each players chip count. All
  remaining players will also receive their entry fee' (:func:`fifty_fifty`).
* **In the money** — 'each remaining player with the minimum prize not yet awarded and the
  rest of the prize pool ... proportionately based on each players chip count', plus the
  entry fee (:func:`in_the_money`).
* Eliminated players are 'not entitled to a refund'; awards in progress are cash.
* **Guaranteed prize pools** — 'only the entry fee will be returned not the guaranteed
  prize'. The document is ambiguous; a setting (:class:`GuaranteeCancellation`), default
  ``COLLECTED_ONLY``: the overlay is not paid, the policy distributes only the money
  players paid in (buy-ins, re-buys, add-ons) less the prizes already awarded, plus the
  fees; ``FEES_ONLY`` (the literal reading): remaining players get their fee back and the
  collected money stays with the house (``house_kept``).

Integer cents (the document is silent): an equal share is ``amount // n`` and the remainder
cents go one each to the players with the most chips (ties: in the order given); a share by
chip count is the largest-remainder method (floors of ``amount * chips / total``, then one
cent each to the largest fractional parts, ties to the larger stack, then the order given).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, unique


@dataclass(frozen=True, slots=True)
class Payment:
    """Part of what a player paid to register: ``method`` (cash, gold chips, gold cards...)."""

    method: str
    amount: int


@dataclass(frozen=True, slots=True)
class EntryPaid:
    """What one entrant paid: ``buy_in`` + ``fee``, as the ``paid_with`` parts."""

    player: str
    buy_in: int
    fee: int
    paid_with: tuple[Payment, ...] = ()

    def payments(self) -> tuple[Payment, ...]:
        if self.paid_with:
            return self.paid_with
        return (Payment("cash", self.buy_in + self.fee),) if self.buy_in + self.fee else ()


@unique
class CancellationPolicy(Enum):
    BEFORE_START = "before_start"
    FIFTY_FIFTY = "fifty_fifty"
    IN_THE_MONEY = "in_the_money"


@unique
class GuaranteeCancellation(Enum):
    """How a tournament with a guaranteed prize pool is compensated (module docstring)."""

    COLLECTED_ONLY = "collected_only"
    FEES_ONLY = "fees_only"


@dataclass(frozen=True, slots=True)
class CancellationPayout:
    """What a cancellation pays.

    ``awards``: cash from the prize money to remaining players; ``fees``: entry fees given
    back; ``refunds``: before the start, each player's payments returned as paid;
    ``distributed``: the prize money the policy had to distribute; ``house_kept``: the part
    of it not paid to players (only under ``GuaranteeCancellation.FEES_ONLY``).
    """

    policy: CancellationPolicy
    awards: dict[str, int] = field(default_factory=dict)
    fees: dict[str, int] = field(default_factory=dict)
    refunds: dict[str, tuple[Payment, ...]] = field(default_factory=dict)
    distributed: int = 0
    house_kept: int = 0

    def total_to(self, player: str) -> int:
        """Cash to ``player``: award, fee and refunds."""
        return (
            self.awards.get(player, 0) + self.fees.get(player, 0) + sum(p.amount for p in self.refunds.get(player, ()))
        )


def _order(stacks: Mapping[str, int]) -> list[str]:
    """Players by chips, most first; ties in the mapping's order."""
    players = list(stacks)
    return sorted(players, key=lambda p: (-stacks[p], players.index(p)))


def share_equally(amount: int, stacks: Mapping[str, int]) -> dict[str, int]:
    """``amount`` split equally; remainder cents one each to the biggest stacks."""
    if not stacks:
        raise ValueError("nobody to pay")
    base, left = divmod(amount, len(stacks))
    order = _order(stacks)
    return {p: base + (1 if order.index(p) < left else 0) for p in stacks}


def share_by_chips(amount: int, stacks: Mapping[str, int]) -> dict[str, int]:
    """``amount`` proportionately to chip counts (largest remainder method)."""
    if not stacks:
        raise ValueError("nobody to pay")
    total = sum(stacks.values())
    if total <= 0:
        return share_equally(amount, stacks)
    floors = {p: amount * c // total for p, c in stacks.items()}
    left = amount - sum(floors.values())
    players = list(stacks)
    order = sorted(players, key=lambda p: (-(amount * stacks[p] % total), -stacks[p], players.index(p)))
    for p in order[:left]:
        floors[p] += 1
    return floors


def _combine(*parts: Mapping[str, int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for part in parts:
        for p, v in part.items():
            out[p] = out.get(p, 0) + v
    return out


def refund_before_start(entries: Sequence[EntryPaid]) -> CancellationPayout:
    """Every buy-in and fee back, in the way it was paid."""
    return CancellationPayout(
        CancellationPolicy.BEFORE_START,
        refunds={e.player: e.payments() for e in entries},
        distributed=sum(e.buy_in for e in entries),
    )


def fifty_fifty(
    pool: int,
    stacks: Mapping[str, int],
    fees: Mapping[str, int],
    *,
    guaranteed: bool = False,
    guarantee_rule: GuaranteeCancellation = GuaranteeCancellation.COLLECTED_ONLY,
) -> CancellationPayout:
    """Nobody in the money: half the pool equally, half by chip count, plus the fees.

    ``pool``: the prize money to distribute (with a guarantee: the money collected)."""
    fees_back = {p: fees.get(p, 0) for p in stacks}
    if guaranteed and guarantee_rule is GuaranteeCancellation.FEES_ONLY:
        return CancellationPayout(CancellationPolicy.FIFTY_FIFTY, fees=fees_back, distributed=pool, house_kept=pool)
    half = pool // 2
    awards = _combine(share_equally(half, stacks), share_by_chips(pool - half, stacks))
    return CancellationPayout(CancellationPolicy.FIFTY_FIFTY, awards=awards, fees=fees_back, distributed=pool)


def in_the_money(
    unawarded: Sequence[int],
    stacks: Mapping[str, int],
    fees: Mapping[str, int],
    *,
    available: int | None = None,
    guaranteed: bool = False,
    guarantee_rule: GuaranteeCancellation = GuaranteeCancellation.COLLECTED_ONLY,
) -> CancellationPayout:
    """Players in the money: each the minimum prize not yet awarded, the rest by chips, plus fees.

    ``unawarded``: the prizes of the places still to award (1st first; one per remaining
    player); ``available``: the prize money left to distribute (default: their sum; with a
    guarantee under ``COLLECTED_ONLY`` the collected money less what was awarded, which may
    be less — then each minimum prize is capped at an equal share of it).
    """
    n = len(stacks)
    if n == 0:
        raise ValueError("nobody to pay")
    if len(unawarded) < n:
        raise ValueError("every remaining player is in the money")
    money = sum(unawarded[:n]) if available is None else available
    fees_back = {p: fees.get(p, 0) for p in stacks}
    if guaranteed and guarantee_rule is GuaranteeCancellation.FEES_ONLY:
        return CancellationPayout(CancellationPolicy.IN_THE_MONEY, fees=fees_back, distributed=money, house_kept=money)
    minimum = min(unawarded[:n])
    minimum = min(minimum, money // n)
    awards = _combine({p: minimum for p in stacks}, share_by_chips(money - minimum * n, stacks))
    return CancellationPayout(CancellationPolicy.IN_THE_MONEY, awards=awards, fees=fees_back, distributed=money)


__all__ = [
    "CancellationPayout",
    "CancellationPolicy",
    "EntryPaid",
    "GuaranteeCancellation",
    "Payment",
    "fifty_fifty",
    "in_the_money",
    "refund_before_start",
    "share_by_chips",
    "share_equally",
]
