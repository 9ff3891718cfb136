"""Small builders for engine scenario tests."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Sequence
from typing import TypeVar

from cardroom.core.cards import parse_cards
from cardroom.core.engine import ActionKind, Event, ForcedBet, Hand, Options, ScriptedSource, SeatIn, Stakes, Variant

T = TypeVar("T")


def last(items: Iterable[T]) -> T | None:
    """The last item of ``items`` run to its end (None if empty), e.g. the final state of a
    pokerkit ``HandHistory``, which yields the state after each action."""
    tail = deque(items, maxlen=1)
    return tail[0] if tail else None


def scripted(holes: dict[int, str], board: str = "") -> ScriptedSource:
    """Known cards: ``{seat: "AhKh ..."}`` in the order each seat receives them."""
    return ScriptedSource({s: parse_cards(c) for s, c in holes.items()}, parse_cards(board) if board else [])


def make(
    code: str,
    stakes: Stakes,
    stacks: dict[int, int],
    button: int | None,
    holes: dict[int, str] | None = None,
    board: str = "",
    forced: Sequence[ForcedBet] | None = None,
    options: Options = Options(),
    **kw,
) -> Hand:
    """A hand of ``code`` with ``{seat: stack}``; unknown hole cards are filled from a fixed
    pool so betting-only scenarios need not name cards."""
    variant = Variant.parse(code)
    holes = dict(holes or {})
    from cardroom.core.cards import DECK

    used: set[int] = set()
    for text in list(holes.values()) + [board]:
        if text:
            used.update(c.index for c in parse_cards(text))
    pool = [c for c in DECK if c.index not in used]
    for seat in stacks:  # pad every seat to 7 known cards (Stud streets, draws)
        have = len(parse_cards(holes[seat])) if holes.get(seat) else 0
        if have < 7:
            cards, pool = pool[: 7 - have], pool[7 - have :]
            holes[seat] = (holes.get(seat, "") + " " + " ".join(str(c) for c in cards)).strip()
    if not board and variant.spec.has_board:
        board = " ".join(str(c) for c in pool[:5])
    seats = [SeatIn(s, f"p{s}", st) for s, st in stacks.items()]
    return Hand(variant, stakes, seats, button, scripted(holes, board), forced, options=options, **kw)


def kinds(hand: Hand) -> set[ActionKind]:
    la = hand.legal_actions()
    return set() if la is None else set(la.kinds)


def of_type(hand: Hand, cls: type) -> list[Event]:
    return [e for e in hand.events if isinstance(e, cls)]
