"""``python -m evaluator``: run the evaluator service."""

from evaluator.server import main

main()
