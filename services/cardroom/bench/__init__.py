"""Benchmarks run by ``cardroom bench`` / ``make bench``.

Every module here defines ``run(args) -> None`` that measures Cardroom next to the reference
libraries in the same run and prints the figures side by side with their ratios. Benchmarks
never assert wall-clock times; they are not tests. Reference libraries (treys, phevaluator,
pokerkit) are dev dependencies and are imported inside ``run``.
"""
