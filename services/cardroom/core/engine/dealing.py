"""Card sources: where the engine takes its cards from.

The engine never shuffles by itself: a :class:`DeckSource` deals from a given deck order,
and when a draw exhausts the stub it reshuffles the burned and discarded cards with a
``random.Random(reshuffle_seed)`` owned by the source (deterministic: same inputs, same
hand). A :class:`ScriptedSource` hands out known cards per seat (hand-history replay).
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence

from cardroom.core.cards import Card


class CardSource:
    """Interface: the engine asks for each card as it deals it."""

    def hole(self, seat: int) -> Card:
        raise NotImplementedError

    def board(self) -> Card:
        raise NotImplementedError

    def deal(self, seats: Sequence[int], rounds: int) -> list[list[Card]]:
        """``rounds`` cards to each seat, one at a time in seat order (round robin)."""
        out: list[list[Card]] = [[] for _ in seats]
        for _ in range(rounds):
            for j, seat in enumerate(seats):
                out[j].append(self.hole(seat))
        return out

    def boards(self, count: int) -> list[Card]:
        return [self.board() for _ in range(count)]

    def burn(self) -> None:
        raise NotImplementedError

    def draw(self, seat: int, discards: Sequence[Card]) -> tuple[list[Card], int]:
        """Replace ``discards``; return the new cards and how many cards were reshuffled
        into the stub (0 if none)."""
        raise NotImplementedError

    def muck(self, cards: Iterable[Card]) -> None:
        """Cards of folded hands join the muck (reshuffled if a draw runs out)."""

    def remaining(self) -> int:
        """Cards left in the stub (a large number when unknown)."""
        return 1 << 30

    def community_needed(self, players: int) -> bool:
        """Stud: True when the stub cannot give each of ``players`` a card (rules/003)."""
        return self.remaining() < players


class DeckSource(CardSource):
    """Deal from ``deck`` in order (index 0 first). Draw replacements come from the stub;
    when it runs out, the burned and discarded cards, never the drawing player's own
    discards of this draw, are shuffled and used (rules/003 'Insufficient cards')."""

    __slots__ = ("_deck", "_pos", "_muck", "_seed", "_rng")

    def __init__(self, deck: Sequence[Card], reshuffle_seed: int = 0) -> None:
        self._deck = list(deck)
        self._pos = 0
        self._muck: list[Card] = []
        self._seed = reshuffle_seed
        self._rng: random.Random | None = None

    def _take(self) -> Card:
        if self._pos >= len(self._deck):
            raise IndexError("the deck ran out of cards")
        card = self._deck[self._pos]
        self._pos += 1
        return card

    def hole(self, seat: int) -> Card:
        pos = self._pos
        if pos >= len(self._deck):
            raise IndexError("the deck ran out of cards")
        self._pos = pos + 1
        return self._deck[pos]

    def board(self) -> Card:
        pos = self._pos
        if pos >= len(self._deck):
            raise IndexError("the deck ran out of cards")
        self._pos = pos + 1
        return self._deck[pos]

    def burn(self) -> None:
        self._muck.append(self._take())

    def deal(self, seats: Sequence[int], rounds: int) -> list[list[Card]]:
        k = len(seats)
        pos = self._pos
        end = pos + k * rounds
        if end > len(self._deck):
            raise IndexError("the deck ran out of cards")
        cards = self._deck[pos:end]
        self._pos = end
        return [cards[j::k] for j in range(k)]

    def boards(self, count: int) -> list[Card]:
        pos = self._pos
        end = pos + count
        if end > len(self._deck):
            raise IndexError("the deck ran out of cards")
        self._pos = end
        return self._deck[pos:end]

    def remaining(self) -> int:
        return len(self._deck) - self._pos

    def muck(self, cards: Iterable[Card]) -> None:
        self._muck.extend(cards)

    def draw(self, seat: int, discards: Sequence[Card]) -> tuple[list[Card], int]:
        need = len(discards)
        reshuffled = 0
        if self.remaining() < need:
            if self._rng is None:
                self._rng = random.Random(self._seed)
            pool = list(self._muck)
            self._muck.clear()
            self._rng.shuffle(pool)
            stub = self._deck[self._pos :]
            self._deck = stub + pool
            self._pos = 0
            reshuffled = len(pool)
        new = [self._take() for _ in range(need)]
        self._muck.extend(discards)
        return new, reshuffled


class ScriptedSource(CardSource):
    """Known cards: per-seat queues of hole/draw cards and a board queue (replay)."""

    def __init__(self, holes: dict[int, list[Card]], board: list[Card]) -> None:
        self._holes = {s: list(c) for s, c in holes.items()}
        self._board = list(board)

    def hole(self, seat: int) -> Card:
        queue = self._holes.get(seat)
        if not queue:
            raise IndexError(f"no more known cards for seat {seat}")
        return queue.pop(0)

    def board(self) -> Card:
        if not self._board:
            raise IndexError("no more known board cards")
        return self._board.pop(0)

    def burn(self) -> None:
        return None

    def draw(self, seat: int, discards: Sequence[Card]) -> tuple[list[Card], int]:
        return [self.hole(seat) for _ in discards], 0

    def community_needed(self, players: int) -> bool:
        return bool(self._board)
