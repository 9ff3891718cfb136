"""deploy/prometheus checked with the real promtool (Debian's prometheus package, installed by
scripts/install-tools.sh when missing): the scrape config and the rule files are valid, the alert
unit tests pass, and every alert is tested both firing and silent, carries a severity, a summary and
a runbook paragraph in docs/operations.md."""

from __future__ import annotations

import re
import subprocess

import pytest
import yaml

from tests.infra.repo import ROOT
from tests.infra.tools import prometheus_binaries

PROM = ROOT / "deploy" / "prometheus"
RULE_FILES = sorted((PROM / "rules").glob("*.yml"))
UNIT_TESTS = PROM / "tests" / "alerts_test.yml"
SEVERITIES = {"critical", "warning"}


def _promtool(*args: str) -> subprocess.CompletedProcess[str]:
    _, promtool = prometheus_binaries()
    return subprocess.run([promtool, *args], check=False, capture_output=True, text=True, cwd=PROM)


def alerts() -> list[dict]:
    return [
        rule
        for path in RULE_FILES
        for group in yaml.safe_load(path.read_text())["groups"]
        for rule in group["rules"]
        if "alert" in rule
    ]


def test_promtool_check_config():
    result = _promtool("check", "config", "prometheus.yml")
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_check_rules():
    result = _promtool("check", "rules", *(str(p) for p in RULE_FILES))
    assert result.returncode == 0, result.stdout + result.stderr


def test_promtool_test_rules():
    result = _promtool("test", "rules", str(UNIT_TESTS))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "SUCCESS" in result.stdout


def test_prometheus_yml_loads_every_rule_file():
    config = yaml.safe_load((PROM / "prometheus.yml").read_text())
    assert sorted(PROM / f for f in config["rule_files"]) == RULE_FILES


def test_unit_tests_load_every_rule_file():
    files = yaml.safe_load(UNIT_TESTS.read_text())["rule_files"]
    assert sorted((PROM / "tests" / f).resolve() for f in files) == RULE_FILES


@pytest.mark.parametrize("alert", alerts(), ids=lambda a: a["alert"])
def test_every_alert_is_tested_firing_and_silent(alert):
    fired = silent = False
    for case in yaml.safe_load(UNIT_TESTS.read_text())["tests"]:
        for check in case.get("alert_rule_test", []):
            if check["alertname"] == alert["alert"]:
                fired |= bool(check.get("exp_alerts"))
                silent |= not check.get("exp_alerts")
    assert fired, f"{alert['alert']}: no unit test where it fires"
    assert silent, f"{alert['alert']}: no unit test where it stays silent"


@pytest.mark.parametrize("alert", alerts(), ids=lambda a: a["alert"])
def test_every_alert_has_severity_summary_and_a_runbook_paragraph(alert):
    assert alert["labels"]["severity"] in SEVERITIES
    assert alert["annotations"]["summary"]
    anchor = alert["annotations"]["runbook_url"]
    assert anchor == f"docs/operations.md#{alert['alert'].lower()}"
    docs = (ROOT / "docs" / "operations.md").read_text()
    match = re.search(rf"^#### {alert['alert']}\n\n(.+?)(?=\n#|\Z)", docs, re.MULTILINE | re.DOTALL)
    assert match, f"docs/operations.md has no '#### {alert['alert']}' runbook"
    assert len(match.group(1).split()) >= 30, f"{alert['alert']}: the runbook paragraph is too thin"
