"""Monitoring files against the code (issue 17): every metric a dashboard or rule names is registered
by some service (or is a recording rule / a Prometheus series), the generated files are current, and
the dashboards, provisioning, PodMonitor and scrape config agree with the services."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import yaml

from tests.infra.monitoring import (
    BUILTIN,
    DASHBOARDS,
    alert_rules,
    dashboard_queries,
    metric_names,
    recording_rules,
    registered_series,
)
from tests.infra.repo import ROOT, runnable_services

GRAFANA = ROOT / "deploy" / "grafana"


def test_metric_names_are_read_from_promql():
    assert metric_names('sum by (variant) (rate(dealer_hands_dealt_total{variant="NT"}[5m])) or vector(0)') == {
        "dealer_hands_dealt_total"
    }
    assert metric_names("histogram_quantile(0.99, sum by (le) (rate(gateway_act_seconds_bucket[1m])))") == {
        "gateway_act_seconds_bucket"
    }
    assert metric_names("a:b:c / (sum by (variant) (dealer_tables_active) > 0)") == {"a:b:c", "dealer_tables_active"}


def test_every_metric_a_dashboard_or_rule_names_is_registered_by_some_service():
    series = registered_series()
    records = recording_rules()
    wanted: dict[str, str] = {}
    for dashboard, title, expr in dashboard_queries():
        for name in metric_names(expr):
            wanted.setdefault(name, f"dashboard {dashboard}: {title}")
    for name, expr in records.items():
        for metric in metric_names(expr):
            wanted.setdefault(metric, f"recording rule {name}")
    for name, rule in alert_rules().items():
        for metric in metric_names(rule["expr"]):
            wanted.setdefault(metric, f"alert {name}")
    unknown = {
        name: where
        for name, where in wanted.items()
        if name not in series and name not in records and name not in BUILTIN
    }
    assert not unknown, f"named but registered by no service: {unknown}"
    assert len([n for n in wanted if n in series]) > 40  # the check really looked at the services' registry


def test_generated_dashboards_and_prometheus_rule_are_current():
    result = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_monitoring.py"), "--check"],
        check=False,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, "run python scripts/gen_monitoring.py:\n" + result.stdout + result.stderr


def test_dashboards_read_the_datasource_variable_and_have_unique_uids():
    provisioned = yaml.safe_load((GRAFANA / "provisioning" / "datasources" / "prometheus.yml").read_text())
    uid = provisioned["datasources"][0]["uid"]
    uids = set()
    for path in sorted(DASHBOARDS.glob("*.json")):
        dashboard = json.loads(path.read_text())
        assert dashboard["uid"] not in uids
        uids.add(dashboard["uid"])
        (variable,) = [v for v in dashboard["templating"]["list"] if v["name"] == "datasource"]
        assert variable["type"] == "datasource" and variable["query"] == "prometheus"
        assert variable["current"]["value"] == uid
        assert dashboard["panels"], path.name
        for panel in dashboard["panels"]:
            assert panel["datasource"] == "${datasource}", (path.name, panel["title"])
            assert all(t["datasource"] == "${datasource}" for t in panel["targets"]), (path.name, panel["title"])
    assert {
        "cardroom-overview",
        "cardroom-tables",
        "cardroom-wallet",
        "cardroom-gateway",
        "cardroom-kafka",
        "cardroom-tournaments",
    } <= uids
    provider = yaml.safe_load((GRAFANA / "provisioning" / "dashboards" / "cardroom.yml").read_text())
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["grafana"]
    assert f"./deploy/grafana/dashboards:{provider['providers'][0]['options']['path']}:ro" in compose["volumes"]


def test_compose_scrape_config_names_every_service_on_its_metrics_port():
    """Every service on its metrics port, labelled with its name; the dealer, a set of replicas in compose
    (dealer shards), found by its DNS name so that each replica is a target of its own, the ``service``
    label taken from that name."""
    config = yaml.safe_load((ROOT / "deploy" / "prometheus" / "prometheus.yml").read_text())
    targets = {
        static["labels"]["service"]: static["targets"]
        for job in config["scrape_configs"]
        for static in job["static_configs"]
    }
    (job,) = config["scrape_configs"]
    for found in job.get("dns_sd_configs", []):
        assert found["type"] == "A", found
        for name in found["names"]:
            targets[name] = [f"{name}:{found['port']}"]
    assert targets == {name: [f"{name}:{metrics}"] for name, (_, metrics) in runnable_services().items()}
    assert [found["names"] for found in job["dns_sd_configs"]] == [["dealer"]]
    (relabel,) = job["relabel_configs"]
    assert relabel == {"source_labels": ["__meta_dns_name"], "regex": "(.+)", "target_label": "service"}
    compose = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    assert compose["dealer"]["deploy"]["replicas"] >= 2


def test_pod_monitor_scrapes_the_metrics_port_and_labels_the_service():
    monitor = yaml.safe_load((ROOT / "deploy" / "k8s" / "components" / "monitoring" / "podmonitor.yaml").read_text())
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    assert endpoint["port"] == "metrics"
    relabel = endpoint["relabelings"][0]
    assert relabel["targetLabel"] == "service"
    assert relabel["sourceLabels"] == ["__meta_kubernetes_pod_label_app_kubernetes_io_component"]
    for name in runnable_services():  # the component label carries the service's own name
        text = (ROOT / "deploy" / "k8s" / "base" / f"{name.replace('_', '-')}.yaml").read_text()
        assert f"app.kubernetes.io/component: {name}\n" in text


def test_every_metric_and_recording_rule_is_documented():
    docs = (ROOT / "docs" / "operations.md").read_text()
    families = {
        family for family in registered_series().values() if not family.startswith(("python_", "process_", "platform_"))
    }
    series = registered_series()
    documented = {name for name in re.findall(r"`([a-z_:][a-z0-9_:]*)`", docs)}
    missing = [f for f in families if not any(series.get(d) == f or d == f for d in documented)]
    assert not missing, f"docs/operations.md does not document {sorted(missing)}"
    recorded = set(recording_rules())
    mentioned = set(re.findall(r"`([a-z_:]*:[a-z0-9_:]*)`", docs))
    for name in recorded:  # "p50_1m` / `p99_1m" abbreviations: the stem must be there
        assert name in mentioned or any(name.startswith(m.rsplit(":", 1)[0] + ":") for m in mentioned), name
