"""Parsing card text from requests, with the offending field named in errors."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cardroom.core.cards import Card
from evaluator.errors import BadRequest


def parse_field(texts: Iterable[str], field: str) -> list[Card]:
    cards = []
    for i, text in enumerate(texts):
        try:
            cards.append(Card.parse(text))
        except ValueError as err:
            raise BadRequest(f"{field}[{i}]", str(err)) from None
    return cards


def check_counts(cards: Sequence[Card], allowed: tuple[int, ...], field: str) -> None:
    if allowed and len(cards) not in allowed:
        raise BadRequest(field, f"{len(cards)} cards, expected {' or '.join(map(str, allowed))}")


def check_distinct(groups: Iterable[tuple[str, Sequence[Card]]]) -> None:
    """Every card at most once across all groups; names the field where the repeat occurs."""
    seen: dict[int, str] = {}
    for field, cards in groups:
        for card in cards:
            if card.index in seen:
                raise BadRequest(field, f"duplicate card {card} (also in {seen[card.index]})")
            seen[card.index] = field
