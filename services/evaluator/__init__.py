"""The evaluator service: Evaluate, Showdown (pots, hi/lo halves, odd chips) and Equity
(exhaustive or Monte Carlo over the NumPy batch evaluators)."""
