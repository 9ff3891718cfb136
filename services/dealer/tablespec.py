"""A ``TableConfig`` (proto) checked and turned into the rules core's table settings."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypedDict

from cardroom.core.engine import SmallBlindRule, Stakes, Structure, Variant, spread_maxima
from cardroom.core.table import BuyInLimits, NoRake, PercentageRake, RakePolicy, Table, TableSettings, buy_in_limits
from cardroom.core.table.rake import RakeTableChoice
from cardroom.core.table.settings import max_players, stud_ante_for, uses_blinds
from cardroom.v1 import common_pb2, dealer_pb2
from dealer.errors import invalid

_LIMITS = (Structure.FIXED_LIMIT, Structure.SPREAD_LIMIT)
_MAX_MONEY = 10**12


@dataclass(frozen=True)
class TableSpec:
    """Everything needed to build a :class:`Table`, plus the normalized config."""

    config: dealer_pb2.TableConfig
    variant: Variant
    settings: TableSettings
    stakes: Stakes
    buy_in: BuyInLimits
    rake: RakePolicy | None
    currency: int
    hand_pause: float

    def new_table(self, allowance: object, name: str) -> Table:
        return Table(self.settings, self.stakes, rake=self.rake, buy_in=self.buy_in, allowance=allowance, name=name)  # type: ignore[arg-type]


def _money(value: int, field: str) -> int:
    if value < 0 or value > _MAX_MONEY:
        raise invalid(f"{field}: {value} is outside 0..{_MAX_MONEY}")
    return value


def _spread(variant: Variant, s: dealer_pb2.Stakes, small: int, big: int) -> tuple[int, ...]:
    """Spread-limit maxima per round: the config's, or small/big bet by round (rules/003)."""
    if variant.structure is not Structure.SPREAD_LIMIT:
        if s.spread_maxima:
            raise invalid("config.stakes.spread_maxima: only for spread-limit games")
        return ()
    maxima = tuple(_money(m, "config.stakes.spread_maxima") for m in s.spread_maxima)
    rounds = len(variant.spec.streets)
    if maxima and (len(maxima) > rounds or min(maxima) <= 0):
        raise invalid(f"config.stakes.spread_maxima: 1..{rounds} positive amounts (one per betting round)")
    return maxima or spread_maxima(variant, small, big)


def _stakes(variant: Variant, s: dealer_pb2.Stakes, dollar: int) -> tuple[Stakes, int, int]:
    """Core stakes and the (low, high) numbers naming the table."""
    for name in (
        "small_blind",
        "big_blind",
        "small_bet",
        "big_bet",
        "ante",
        "bring_in",
        "chip",
        "big_blind_ante",
        "button_ante",
    ):
        _money(getattr(s, name), f"config.stakes.{name}")
    limit = variant.structure in _LIMITS
    chip = s.chip or 1
    extra = {"chip": chip, "big_blind_ante": s.big_blind_ante, "button_ante": s.button_ante}
    if not uses_blinds(variant.game):
        if s.small_bet <= 0:
            raise invalid("config.stakes.small_bet: required (> 0) for stud games")
        if s.big_blind_ante or s.button_ante:
            raise invalid("config.stakes: big-blind and button antes are for blind games")
        try:  # the table rule (issue 13): derived when unset, an explicit 0 only with no_ante
            ante = stud_ante_for(variant.game, s.small_bet, s.ante if s.HasField("ante") else None, no_ante=s.no_ante)
        except ValueError as exc:
            raise invalid(f"config.stakes.ante: {exc}") from None
        big = s.big_bet or 2 * s.small_bet
        stakes = Stakes.for_stud(
            s.small_bet,
            big,
            ante=ante,
            bring_in=s.bring_in or None,
            spread_maxima=_spread(variant, s, s.small_bet, big),
            chip=chip,
        )
        if stakes.bring_in <= 0:
            raise invalid("config.stakes.bring_in: must be positive")
        return stakes, stakes.small_bet, stakes.big_bet
    if limit:
        small = s.small_bet or s.big_blind
        if small <= 0:
            raise invalid("config.stakes.small_bet: required (> 0) for limit games")
        big = s.big_bet or 2 * small
        rule = SmallBlindRule.EXACTLY_HALF if s.small_blind_exactly_half else SmallBlindRule.ROUND_DOWN
        stakes = Stakes.limit(
            small,
            big,
            ante=s.ante,
            dollar=dollar,
            small_blind_rule=rule,
            spread_maxima=_spread(variant, s, small, big),
            **extra,
        )
        return stakes, stakes.small_bet, stakes.big_bet
    if s.big_blind <= 0 or not 0 < s.small_blind <= s.big_blind:
        raise invalid("config.stakes: big-bet games need 0 < small_blind <= big_blind")
    _spread(variant, s, 0, 0)
    return Stakes.blinds(s.small_blind, s.big_blind, ante=s.ante, **extra), s.small_blind, s.big_blind


_RAKE_TABLES = {
    dealer_pb2.RakeSettings.KIND_UNSPECIFIED: RakeTableChoice.AUTO,
    dealer_pb2.RakeSettings.KIND_STANDARD_TABLE: RakeTableChoice.STANDARD,
    dealer_pb2.RakeSettings.KIND_BIG_BET_TABLE: RakeTableChoice.BIG_BET,
}


def _rake(r: dealer_pb2.RakeSettings) -> RakePolicy | None:
    if r.kind == dealer_pb2.RakeSettings.KIND_NONE:
        return NoRake()
    if r.kind == dealer_pb2.RakeSettings.KIND_PERCENT:
        if not 0 < r.basis_points <= 2000 or r.cap < 0 or r.step < 0:
            raise invalid("config.rake: basis_points must be 1..2000, cap and step non-negative")
        return PercentageRake(r.basis_points, r.cap or 10**12, r.step or 1)
    if r.kind not in _RAKE_TABLES:
        raise invalid(f"config.rake.kind: unknown value {r.kind}")
    return None


class _Absence(TypedDict):
    """The absence keywords of :class:`TableSettings`, typed one by one for ``**``."""

    sit_out_after_timeouts: int
    sit_out_after_missed_orbit: bool
    stand_up_after_seconds: float


def _absence(clock: dealer_pb2.ClockSettings) -> _Absence:
    """The sit-out / stand-up limits for absent players (issue 13): 0 = the default, -1 = never."""
    if not -1 <= clock.sit_out_after_timeouts <= 100:
        raise invalid("config.clock.sit_out_after_timeouts: must be -1..100")
    if not (clock.stand_up_after_seconds == -1 or 0 <= clock.stand_up_after_seconds <= 86400):
        raise invalid("config.clock.stand_up_after_seconds: must be -1 or 0..86400")
    timeouts = clock.sit_out_after_timeouts
    seconds = clock.stand_up_after_seconds
    return {
        "sit_out_after_timeouts": 0 if timeouts == -1 else (timeouts or 2),
        "sit_out_after_missed_orbit": timeouts != -1,
        "stand_up_after_seconds": 0.0 if seconds == -1 else (seconds or 600.0),
    }


def build(config: dealer_pb2.TableConfig) -> TableSpec:
    """Check ``config`` (INVALID_ARGUMENT naming the field) and fill in the defaults."""
    try:
        variant = Variant.parse(config.variant)
    except ValueError:
        raise invalid(f"config.variant: unknown variant {config.variant!r} (e.g. 'NT', 'PO/8', 'F7S')") from None
    currency = config.currency or common_pb2.CURRENCY_CASH
    if currency not in (common_pb2.CURRENCY_CASH, common_pb2.CURRENCY_PLAY):
        raise invalid(f"config.currency: unknown value {config.currency}")
    if len(config.name) > 64:
        raise invalid("config.name: longer than 64 characters")
    # cash tables count in cents: the small blind rounds down to the dollar (rules/000, 002)
    stakes, low, high = _stakes(variant, config.stakes, 100 if currency == common_pb2.CURRENCY_CASH else 1)
    clock = config.clock
    for name in ("action_seconds", "draw_seconds", "time_bank_seconds"):
        value = getattr(clock, name)
        if not 0 <= value <= 3600:
            raise invalid(f"config.clock.{name}: {value} is outside 0..3600")
    if clock.all_in_allowance < -1 or clock.all_in_allowance > 100:
        raise invalid("config.clock.all_in_allowance: must be -1..100")
    if not 0 <= config.hand_pause_seconds <= 60:
        raise invalid("config.hand_pause_seconds: must be 0..60")
    top = max_players(variant.game)
    if config.seats and not 2 <= config.seats <= top:
        raise invalid(f"config.seats: {config.seats} is outside 2..{top} for {variant.code}")
    play = currency == common_pb2.CURRENCY_PLAY
    try:
        settings = TableSettings(
            variant.game,
            variant.structure,
            play_money=play,
            seat_count=config.seats,
            action_seconds=clock.action_seconds or 30.0,
            draw_seconds=clock.draw_seconds or 30.0,
            time_bank_seconds=clock.time_bank_seconds,
            all_in_allowance=0 if clock.all_in_allowance == -1 else (clock.all_in_allowance or 2),
            rake_table=_RAKE_TABLES.get(config.rake.kind, RakeTableChoice.AUTO),
            **_absence(clock),
        )
        house = buy_in_limits(variant.structure, low, high)
    except ValueError as exc:
        raise invalid(f"config: {exc}") from None
    minimum = _money(config.min_buy_in, "config.min_buy_in") or house.minimum
    maximum = _money(config.max_buy_in, "config.max_buy_in") or house.maximum
    if maximum is not None and maximum < minimum:
        raise invalid(f"config.max_buy_in: {maximum} is below the minimum buy-in {minimum}")
    rake = _rake(config.rake)
    normalized = dealer_pb2.TableConfig()
    normalized.CopyFrom(config)
    normalized.variant = variant.code
    normalized.currency = currency
    normalized.seats = settings.seat_count
    normalized.stakes.CopyFrom(
        dealer_pb2.Stakes(
            small_blind=stakes.small_blind,
            big_blind=stakes.big_blind,
            small_bet=stakes.small_bet,
            big_bet=stakes.big_bet,
            ante=stakes.ante,
            bring_in=stakes.bring_in,
            spread_maxima=list(stakes.spread_maxima),
            chip=stakes.chip,
            small_blind_exactly_half=config.stakes.small_blind_exactly_half,
            big_blind_ante=stakes.big_blind_ante,
            button_ante=stakes.button_ante,
        )
    )
    normalized.min_buy_in = minimum
    normalized.max_buy_in = maximum or 0
    normalized.clock.action_seconds = settings.action_seconds
    normalized.clock.draw_seconds = settings.draw_seconds
    normalized.hand_pause_seconds = config.hand_pause_seconds or 1.0
    return TableSpec(
        normalized,
        variant,
        settings,
        stakes,
        BuyInLimits(minimum, maximum),
        rake,
        currency,
        normalized.hand_pause_seconds,
    )
