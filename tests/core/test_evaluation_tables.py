"""The lookup tables' building blocks (services/cardroom/core/evaluation/tables.py)."""

from __future__ import annotations

import numpy as np
import pytest

from cardroom.core.evaluation import tables


@pytest.mark.parametrize("keys, sizes", [(tables.RANK_KEYS_7, (5, 6, 7)), (tables.RANK_KEYS_5, (5,))])
def test_rank_key_sums_are_unique_per_hand_size(keys, sizes) -> None:
    """Distinct rank multisets (at most four of a rank) must have distinct key sums."""
    k = np.array(keys, np.int64)
    for n in sizes:
        vecs = tables.count_vectors(n)
        sums = vecs.astype(np.int64) @ k
        assert len(np.unique(sums)) == len(vecs)


def test_count_vectors_counts() -> None:
    # rank multisets of 5 with at most four of a kind: C(17,5) - 13 (five of a kind) = 6175
    assert len(tables.count_vectors(5)) == 6175
    assert len(tables.count_vectors(7)) == 49205
    assert (tables.count_vectors(7).max(axis=1) <= 4).all()


def test_flush_suit_table() -> None:
    fs = tables.flush_suit_table()
    assert fs[5 << 3] == 1 and fs[4 << 3 | 3] == -1 and fs[7 << 9] == 3
