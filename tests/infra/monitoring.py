"""What the monitoring files ask of the services: the PromQL of every dashboard panel and rule, and
the metric names in it (for the registry test and the live Prometheus proof)."""

from __future__ import annotations

import importlib
import json
import re

import yaml
from prometheus_client import REGISTRY

from tests.infra.repo import ROOT, runnable_services

DASHBOARDS = ROOT / "deploy" / "grafana" / "dashboards"
RULES = ROOT / "deploy" / "prometheus" / "rules"
#: Series Prometheus makes itself.
BUILTIN = {"up", "ALERTS", "ALERTS_FOR_STATE", "scrape_duration_seconds", "scrape_samples_scraped"}
PROMQL_WORDS = {
    "sum",
    "max",
    "min",
    "avg",
    "count",
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "and",
    "or",
    "unless",
    "rate",
    "irate",
    "increase",
    "histogram_quantile",
    "vector",
    "offset",
    "bool",
    "topk",
    "bottomk",
    "abs",
    "clamp_min",
    "clamp_max",
    "absent",
    "delta",
    "deriv",
    "time",
}


def rule_groups() -> list[dict]:
    return [group for path in sorted(RULES.glob("*.yml")) for group in yaml.safe_load(path.read_text())["groups"]]


def recording_rules() -> dict[str, str]:
    return {rule["record"]: rule["expr"] for group in rule_groups() for rule in group["rules"] if "record" in rule}


def alert_rules() -> dict[str, dict]:
    return {rule["alert"]: rule for group in rule_groups() for rule in group["rules"] if "alert" in rule}


def dashboard_queries() -> list[tuple[str, str, str]]:
    """(dashboard file, panel title, PromQL) for every target of every panel."""
    found = []
    for path in sorted(DASHBOARDS.glob("*.json")):
        for panel in json.loads(path.read_text())["panels"]:
            for target in panel.get("targets", []):
                found.append((path.stem, panel["title"], target["expr"]))
    return found


def metric_names(expr: str) -> set[str]:
    """Metric (and recording-rule) names an expression reads."""
    text = re.sub(r'"(?:[^"\\]|\\.)*"', "", expr)  # string literals
    text = re.sub(r"\{[^}]*\}", "", text)  # label matchers
    text = re.sub(r"\[[^\]]*\]", "", text)  # range durations
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", text)
    names = set()
    for match in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", text):
        name = match.group(0)
        following = text[match.end() :].lstrip()[:1]
        if name in PROMQL_WORDS or following == "(" or re.fullmatch(r"\d+[smhd]", name):
            continue
        names.add(name)
    return names


def registered_series() -> dict[str, str]:
    """Every series name the services can expose -> the metric family that exposes it."""
    for service in runnable_services():
        try:
            importlib.import_module(f"{service}.metrics")
        except ModuleNotFoundError:
            pass
    importlib.import_module("cardroom.runtime.metrics")
    series: dict[str, str] = {}
    suffixes = {
        "counter": ("_total",),
        "histogram": ("_bucket", "_count", "_sum"),
        "gauge": ("",),
        "summary": ("", "_count", "_sum"),
        "info": ("_info",),
    }
    for collector in list(REGISTRY._collector_to_names):
        for family in collector.describe() if hasattr(collector, "describe") else collector.collect():
            for suffix in suffixes.get(family.type, ("",)):
                series[family.name + suffix] = family.name
    return series
