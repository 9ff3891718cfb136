"""A tournament table's settings from ``OpenTournamentTableRequest`` (tournament_tables.proto):
the rules core's tournament :class:`TableSettings` (``GameKind.TOURNAMENT``: no buy-in, no rake,
a player who sits out stays dealt in) and a level's stakes read back through the core's own
:class:`~cardroom.core.tournament.structure.Level`, so the dealer plays exactly the stakes the
tournament's structure gives."""

from __future__ import annotations

from cardroom.core.engine import Stakes, Variant
from cardroom.core.table import BuyInLimits, NoRake, TableSettings
from cardroom.core.table.settings import GameKind, max_players
from cardroom.core.tournament.structure import AnteKind, Level
from cardroom.v1 import common_pb2, dealer_pb2, tournament_tables_pb2 as tt
from dealer.errors import invalid
from dealer.tablespec import TableSpec

#: Seconds between two hands of a tournament table.
HAND_PAUSE = 1.0
_MAX_CHIPS = 10**12


def variant_of(code: str) -> Variant:
    try:
        return Variant.parse(code)
    except ValueError:
        raise invalid(f"variant: unknown variant {code!r} (e.g. 'NT', 'PO', 'F7S')", field="variant") from None


def core_stakes(variant: Variant, s: tt.TournamentStakes, field: str = "stakes") -> Stakes:
    """The engine's stakes of a level on the wire (the inverse of the tournament service's ``wire_stakes``)."""
    for name in (
        "small_blind",
        "big_blind",
        "ante",
        "big_blind_ante",
        "button_ante",
        "small_bet",
        "big_bet",
        "bring_in",
    ):
        value = getattr(s, name)
        if not 0 <= value <= _MAX_CHIPS:
            raise invalid(f"{field}.{name}: {value} is outside 0..{_MAX_CHIPS}", field=f"{field}.{name}")
    if sum(1 for a in (s.ante, s.big_blind_ante, s.button_ante) if a) > 1:
        raise invalid(f"{field}: one kind of ante per level (ante, big_blind_ante or button_ante)", field=field)
    kind = AnteKind.BIG_BLIND if s.big_blind_ante else AnteKind.BUTTON if s.button_ante else AnteKind.STANDARD
    level = Level(
        small_blind=s.small_blind,
        big_blind=s.big_blind,
        ante=s.ante or s.big_blind_ante or s.button_ante,
        ante_kind=kind,
        small_bet=s.small_bet,
        big_bet=s.big_bet,
        bring_in=s.bring_in,
    )
    try:
        return level.stakes(variant)  # the variant playable at them (Level.verify), else refused
    except ValueError as exc:
        raise invalid(f"{field}: {exc}", field=field) from None


def tournament_spec(opened: tt.OpenTournamentTableRequest) -> TableSpec:
    """Check the request's table settings (INVALID_ARGUMENT naming the field) and build the spec."""
    variant = variant_of(opened.variant)
    top = max_players(variant.game)
    if not 2 <= opened.seat_count <= top:
        raise invalid(f"seat_count: {opened.seat_count} is outside 2..{top} for {variant.code}", field="seat_count")
    for name in ("action_seconds", "time_bank_seconds"):
        value = getattr(opened, name)
        if not 0 <= value <= 3600:
            raise invalid(f"{name}: {value} is outside 0..3600", field=name)
    stakes = core_stakes(variant, opened.stakes)
    settings = TableSettings(
        variant.game,
        variant.structure,
        GameKind.TOURNAMENT,
        seat_count=opened.seat_count,
        action_seconds=opened.action_seconds or 30.0,
        draw_seconds=opened.action_seconds or 30.0,
        time_bank_seconds=opened.time_bank_seconds,
        time_bank_when_disconnected=opened.time_bank_when_disconnected,
    )
    config = dealer_pb2.TableConfig(
        name=f"{opened.tournament_id[:48]} table {opened.table}",
        variant=variant.code,
        currency=common_pb2.CURRENCY_PLAY,  # tournament chips: never money, never the wallet
        seats=settings.seat_count,
        stakes=dealer_pb2.Stakes(
            small_blind=stakes.small_blind,
            big_blind=stakes.big_blind,
            small_bet=stakes.small_bet,
            big_bet=stakes.big_bet,
            ante=stakes.ante,
            bring_in=stakes.bring_in,
            big_blind_ante=stakes.big_blind_ante,
            button_ante=stakes.button_ante,
        ),
        rake=dealer_pb2.RakeSettings(kind=dealer_pb2.RakeSettings.KIND_NONE),
        clock=dealer_pb2.ClockSettings(action_seconds=settings.action_seconds, draw_seconds=settings.draw_seconds),
        hand_pause_seconds=HAND_PAUSE,
        unlisted=True,
        owner=f"tournament.{opened.tournament_id}"[:64],
    )
    return TableSpec(
        config, variant, settings, stakes, BuyInLimits(0, None), NoRake(), common_pb2.CURRENCY_PLAY, HAND_PAUSE
    )


__all__ = ["HAND_PAUSE", "core_stakes", "tournament_spec", "variant_of"]
