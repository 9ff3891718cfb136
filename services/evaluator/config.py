"""Evaluator settings from the environment (on top of the shared ServiceConfig).

* ``EVALUATOR_EQUITY_MAX_SAMPLES`` (default 200,000): the largest Monte Carlo sample one Equity
  request may ask for;
* ``EVALUATOR_EQUITY_MAX_EXHAUSTIVE`` (default 2,000,000): the largest exhaustive threshold
  (``max_exhaustive``) a request may set;
* ``EVALUATOR_EQUITY_MAX_PLAYERS`` (default 10, at most 10);
* ``EVALUATOR_EQUITY_MAX_EVALUATIONS`` (default 2,000,000): hand evaluations (boards x players x
  rankings) one request may cost — 1M samples for 10 players took ~1 s of a core and +450 MB.

A request past any of them is INVALID_ARGUMENT naming the field and the limit.
"""

from __future__ import annotations

from dataclasses import dataclass

from cardroom.runtime.config import ServiceConfig, env_int
from evaluator.equity import MAX_EVALUATIONS, MAX_EXHAUSTIVE, MAX_PLAYERS, MAX_SAMPLES, EquityLimits


@dataclass(frozen=True)
class EvaluatorConfig:
    service: ServiceConfig
    equity: EquityLimits

    @classmethod
    def from_env(cls) -> EvaluatorConfig:
        try:
            limits = EquityLimits(
                max_samples=env_int("EVALUATOR_EQUITY_MAX_SAMPLES", MAX_SAMPLES),
                max_exhaustive=env_int("EVALUATOR_EQUITY_MAX_EXHAUSTIVE", MAX_EXHAUSTIVE),
                max_players=env_int("EVALUATOR_EQUITY_MAX_PLAYERS", MAX_PLAYERS),
                max_evaluations=env_int("EVALUATOR_EQUITY_MAX_EVALUATIONS", MAX_EVALUATIONS),
            )
        except ValueError as err:
            raise SystemExit(f"evaluator: {err}") from None
        return cls(service=ServiceConfig.from_env("evaluator"), equity=limits)
