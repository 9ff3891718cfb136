"""Hand evaluation for every ranking in the house rules (rules/003), per hand and in batch.

Values are integers comparable within one ranking, higher = better in every ranking (the lows
included). Per hand: ``evaluate_*`` return a ``HandValue`` (value, category, the five cards used,
``describe()``); ``high_value`` / ``high_value7`` are integer-only fast paths over card indices.
Batch: ``evaluate_*_batch`` take NumPy integer arrays (N, k) of card indices ``4 * rank + suit``.
"""

from cardroom.core.evaluation.batch import (
    evaluate_deuce7_batch,
    evaluate_high_batch,
    evaluate_low8_batch,
    evaluate_omaha_high_batch,
    evaluate_omaha_low8_batch,
    evaluate_soko_batch,
    high_categories,
)
from cardroom.core.evaluation.evaluate import (
    evaluate,
    evaluate_deuce7,
    evaluate_high,
    evaluate_low8,
    evaluate_omaha_high,
    evaluate_omaha_low8,
    evaluate_soko,
)
from cardroom.core.evaluation.fast import high5_value, high_value, high_value7
from cardroom.core.evaluation.stud import bring_in_key, showing_value
from cardroom.core.evaluation.types import Category, HandValue, Ranking

__all__ = [
    "Category",
    "HandValue",
    "Ranking",
    "bring_in_key",
    "evaluate",
    "evaluate_deuce7",
    "evaluate_deuce7_batch",
    "evaluate_high",
    "evaluate_high_batch",
    "evaluate_low8",
    "evaluate_low8_batch",
    "evaluate_omaha_high",
    "evaluate_omaha_high_batch",
    "evaluate_omaha_low8",
    "evaluate_omaha_low8_batch",
    "evaluate_soko",
    "evaluate_soko_batch",
    "high5_value",
    "high_categories",
    "high_value",
    "high_value7",
    "showing_value",
]
