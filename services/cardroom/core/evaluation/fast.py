"""Integer-only fast paths over card indices (``4 * rank + suit``) for hot loops.

``high_value7`` is unchecked (the caller guarantees seven distinct indices in 0..51);
``high_value`` and ``high5_value`` check their input and raise ``ValueError``.
Values are the dense high values 1..7462 used by ``HandValue.value`` for ``Ranking.HIGH``.
"""

from __future__ import annotations

from collections.abc import Sequence

from cardroom.core.evaluation import tables as _t

_K7: list[int] = _t.card_keys(_t.RANK_KEYS_7).tolist()
_K5: list[int] = _t.card_keys(_t.RANK_KEYS_5).tolist()
_FS: list[int] = _t.flush_suit_table().tolist()
_FL: list[int] = _t.flush_table().tolist()
_LOW32 = (1 << 32) - 1
_T5: memoryview = _t.nonflush_table5().data
_T7: memoryview = _t.nonflush_table(7).data
_T6: memoryview | None = None


def _flush_mask(cards: Sequence[int], suit: int) -> int:
    m = 0
    for x in cards:
        if x & 3 == suit:
            m |= 1 << (x >> 2)
    return m


def high_value7(a: int, b: int, c: int, d: int, e: int, f: int, g: int) -> int:
    """Dense high value of seven distinct card indices (unchecked; the fastest call)."""
    K = _K7
    k = K[a] + K[b] + K[c] + K[d] + K[e] + K[f] + K[g]
    s = _FS[k >> 32]
    if s < 0:
        return _T7[k & _LOW32]
    return _FL[_flush_mask((a, b, c, d, e, f, g), s)]


def high5_value(a: int, b: int, c: int, d: int, e: int) -> int:
    """Dense high value of five distinct card indices (unchecked)."""
    K = _K5
    k = K[a] + K[b] + K[c] + K[d] + K[e]
    s = _FS[k >> 32]
    if s < 0:
        return _T5[k & _LOW32]
    return _FL[_flush_mask((a, b, c, d, e), s)]


def check_indices(cards: Sequence[int], sizes: Sequence[int] = (5, 6, 7)) -> None:
    """Raise ``ValueError`` for a wrong count, an index outside 0..51 or a duplicate."""
    if len(cards) not in sizes:
        raise ValueError(f"wrong card count {len(cards)}: expected {' or '.join(map(str, sizes))}")
    seen = 0
    for x in cards:
        if not isinstance(x, int) or not 0 <= x <= 51:
            raise ValueError(f"card index {x!r} is outside 0..51")
        if seen >> x & 1:
            raise ValueError(f"duplicate card index {x}")
        seen |= 1 << x


def high_value(cards: Sequence[int]) -> int:
    """Dense high value (1..7462) of the best five of 5..7 card indices, checked."""
    check_indices(cards)
    return high_value_unchecked(cards)


def high_value_unchecked(cards: Sequence[int]) -> int:
    """``high_value`` without the input check (5..7 distinct indices in 0..51 assumed)."""
    global _T6
    n = len(cards)
    if n == 7:
        return high_value7(*cards)
    if n == 5:
        return high5_value(*cards)
    if _T6 is None:
        _T6 = _t.nonflush_table(6).data
    K = _K7
    k = 0
    for x in cards:
        k += K[x]
    s = _FS[k >> 32]
    if s < 0:
        return _T6[k & _LOW32]
    return _FL[_flush_mask(cards, s)]


_R5 = [k & _LOW32 for k in _K5]


def omaha_high_best(hole: Sequence[int], board: Sequence[int]) -> tuple[int, tuple[int, ...]]:
    """Best Omaha high (exactly 2 of the 4 hole + 3 of the 3..5 board indices), unchecked:
    (dense value, the five indices used)."""
    R, T = _R5, _T5
    pairs = [(R[a] + R[b], (a, b)) for x, a in enumerate(hole) for b in hole[x + 1 :]]
    triples = [
        (R[a] + R[b] + R[c], (a, b, c))
        for x, a in enumerate(board)
        for y, b in enumerate(board[x + 1 :], x + 1)
        for c in board[y + 1 :]
    ]
    best = 0
    used: tuple[int, ...] = ()
    for hk, hc in pairs:
        for bk, bc in triples:
            v = T[hk + bk]
            if v > best:
                best, used = v, hc + bc
    for s in range(4):
        hs = [a for a in hole if a & 3 == s]
        bs = [a for a in board if a & 3 == s]
        if len(hs) < 2 or len(bs) < 3:
            continue
        for x, a in enumerate(hs):
            for b in hs[x + 1 :]:
                for y, c in enumerate(bs):
                    for z, d in enumerate(bs[y + 1 :], y + 1):
                        for e in bs[z + 1 :]:
                            v = _FL[
                                (1 << (a >> 2)) | (1 << (b >> 2)) | (1 << (c >> 2)) | (1 << (d >> 2)) | (1 << (e >> 2))
                            ]
                            if v > best:
                                best, used = v, (a, b, c, d, e)
    return best, used
