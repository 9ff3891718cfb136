"""The money of a tournament, as wallet transfers with idempotency keys (pure: events in,
transfers out).

* Entry: buy-in from ``player_cash:P:cash`` into the prize-pool escrow
  ``tournament_prize_pool:T:cash`` (TOURNAMENT_ENTRY), fee into the house account
  ``tournament_fees:house:cash`` (TOURNAMENT_FEE); re-buys and add-ons into the pool. These
  are paid *before* the core command (a refused payment changes nothing): :func:`entry_legs`.
* Owed after an event (:class:`PoolBook.owed`): unregistration refunds, the guarantee's overlay
  from the house, prizes, cancellation awards / fees back / refunds, and at the end whatever the
  pool still holds (an overlay not paid out, money the house keeps) back to the house — so the
  escrow is exactly zero after every tournament.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from cardroom.core.ids import AccountKind, Currency, account_id, player_account_id
from cardroom.core.tournament import CancellationPayout, TournamentConfig, events as ev
from cardroom.v1 import wallet_pb2
from tournament.store import MoneyOp

TK = wallet_pb2.TransferKind
FEES_OWNER = "house"


def pool_account(tournament_id: str) -> str:
    return account_id(AccountKind.TOURNAMENT_PRIZE_POOL, tournament_id, Currency.CASH)


def fees_account() -> str:
    return account_id(AccountKind.TOURNAMENT_FEES, FEES_OWNER, Currency.CASH)


def cash_account(player: str) -> str:
    return player_account_id(player, Currency.CASH)


def entry_legs(tournament_id: str, player: str, key: str, pool_amount: int, fee: int, what: str) -> list[MoneyOp]:
    """What a registration / re-buy / add-on pays before it is applied (``key``: its request)."""
    legs = []
    if pool_amount:
        legs.append(
            MoneyOp(
                f"{key}:{what}",
                tournament_id,
                cash_account(player),
                pool_account(tournament_id),
                pool_amount,
                TK.TRANSFER_KIND_TOURNAMENT_ENTRY,
                f"tournament:{tournament_id}:{what}",
            )
        )
    if fee:
        legs.append(
            MoneyOp(
                f"{key}:fee",
                tournament_id,
                cash_account(player),
                fees_account(),
                fee,
                TK.TRANSFER_KIND_TOURNAMENT_FEE,
                f"tournament:{tournament_id}:fee",
            )
        )
    return legs


def undo(leg: MoneyOp) -> MoneyOp:
    """Give back one leg of a payment that did not complete."""
    return MoneyOp(
        f"{leg.key}:undo",
        leg.tournament_id,
        leg.target,
        leg.source,
        leg.amount,
        TK.TRANSFER_KIND_TOURNAMENT_REFUND,
        f"{leg.reference}:undone",
    )


@dataclass
class PoolBook:
    """The prize-pool escrow as the tournament's events move it: in (buy-ins, re-buys, add-ons,
    overlay) and out (refunds, prizes, awards, to the house)."""

    tournament_id: str
    config: TournamentConfig
    overlay_account: str
    pool_in: int = 0
    pool_out: int = 0
    paid: set[str] = field(default_factory=set)

    def _out(self, key: str, target: str, amount: int, kind: int, what: str, source: str | None = None) -> MoneyOp:
        source = source or pool_account(self.tournament_id)
        if source == pool_account(self.tournament_id):
            self.pool_out += amount
        return MoneyOp(
            f"{self.tournament_id}:{key}",
            self.tournament_id,
            source,
            target,
            amount,
            kind,
            f"tournament:{self.tournament_id}:{what}",
        )

    def owed(self, seq: int, event: ev.TournamentEvent, cancellation: CancellationPayout | None) -> list[MoneyOp]:
        """The transfers ``event`` (number ``seq``) makes owed."""
        cfg, tid = self.config, self.tournament_id
        out: list[MoneyOp] = []
        if isinstance(event, ev.Registered):
            self.pool_in += cfg.buy_in
        elif isinstance(event, ev.Rebuy | ev.AddOn):
            self.pool_in += event.cost
        elif isinstance(event, ev.Unregistered):
            if cfg.buy_in:
                out.append(
                    self._out(
                        f"{seq}:unregister",
                        cash_account(event.player),
                        cfg.buy_in,
                        TK.TRANSFER_KIND_TOURNAMENT_REFUND,
                        "unregister",
                    )
                )
            if cfg.fee:
                out.append(
                    self._out(
                        f"{seq}:unregister-fee",
                        cash_account(event.player),
                        cfg.fee,
                        TK.TRANSFER_KIND_TOURNAMENT_REFUND,
                        "unregister-fee",
                        fees_account(),
                    )
                )
        elif isinstance(event, ev.PrizePoolFinal) and event.overlay > 0:
            self.pool_in += event.overlay
            out.append(
                MoneyOp(
                    f"{tid}:overlay",
                    tid,
                    self.overlay_account,
                    pool_account(tid),
                    event.overlay,
                    TK.TRANSFER_KIND_TOURNAMENT_OVERLAY,
                    f"tournament:{tid}:overlay",
                )
            )
        elif isinstance(event, ev.Eliminated) and event.prize:
            out.extend(self._prize(event.player, event.prize))
        elif isinstance(event, ev.Finished):
            for r in event.results:
                out.extend(self._prize(r.player, r.prize))
            out.extend(self._close())
        elif isinstance(event, ev.Cancelled):
            assert cancellation is not None
            out.extend(self._cancellation(cancellation))
            out.extend(self._close())
        return out

    def _prize(self, player: str, prize: int) -> list[MoneyOp]:
        if prize <= 0 or player in self.paid:
            return []
        self.paid.add(player)
        return [self._out(f"prize:{player}", cash_account(player), prize, TK.TRANSFER_KIND_TOURNAMENT_PRIZE, "prize")]

    def _cancellation(self, payout: CancellationPayout) -> list[MoneyOp]:
        out = []
        for player, amount in sorted(payout.awards.items()):
            if amount > 0:
                out.append(
                    self._out(
                        f"cancel-award:{player}",
                        cash_account(player),
                        amount,
                        TK.TRANSFER_KIND_TOURNAMENT_PRIZE,
                        "cancel-award",
                    )
                )
        for player, amount in sorted(payout.fees.items()):
            if amount > 0:
                out.append(
                    self._out(
                        f"cancel-fee:{player}",
                        cash_account(player),
                        amount,
                        TK.TRANSFER_KIND_TOURNAMENT_REFUND,
                        "cancel-fee",
                        fees_account(),
                    )
                )
        for player in sorted(payout.refunds):
            # before the start: every entry as paid (cash: the buy-in from the pool, the fee from the fees)
            if self.config.buy_in:
                out.append(
                    self._out(
                        f"cancel-refund:{player}",
                        cash_account(player),
                        self.config.buy_in,
                        TK.TRANSFER_KIND_TOURNAMENT_REFUND,
                        "cancel-refund",
                    )
                )
            if self.config.fee:
                out.append(
                    self._out(
                        f"cancel-refund-fee:{player}",
                        cash_account(player),
                        self.config.fee,
                        TK.TRANSFER_KIND_TOURNAMENT_REFUND,
                        "cancel-refund-fee",
                        fees_account(),
                    )
                )
        return out

    def _close(self) -> list[MoneyOp]:
        """What is left in the pool goes back to the house: the escrow ends at zero."""
        left = self.pool_in - self.pool_out
        if left < 0:
            raise AssertionError(f"tournament {self.tournament_id}: the pool would pay out {-left} more than it holds")
        if left == 0:
            return []
        return [self._out("to-house", self.overlay_account, left, TK.TRANSFER_KIND_TOURNAMENT_TO_HOUSE, "to-house")]


__all__ = ["FEES_OWNER", "PoolBook", "cash_account", "entry_legs", "fees_account", "pool_account", "undo"]
