"""Hand-history formats for players' tools: :mod:`.pokerstars` (PokerStars text). PHH is
:mod:`cardroom.core.phh`. Pure: hands in, text out."""

from cardroom.core.history.pokerstars import Format, dumps, hand_text

__all__ = ["Format", "dumps", "hand_text"]
