"""Deployments carry the same trust as `make run`: deploy/k8s/components/mtls gives every service its
certificate from a Secret (referenced, never committed) and probes the internal services with their own
certificate; docker-compose mounts the certificates and publishes only the gateway (and the web edge,
Envoy in front of it: tests/infra/test_compose.py)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import kubernetes_validate
import yaml

from cardroom.runtime.readiness import LIVENESS
from tests.infra.repo import ROOT, runnable_services
from tests.infra.tools import kustomize_command

OVERLAY = """apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources:
  - ../../base
components:
  - ../../components/mtls
"""


def render_with_mtls(tmp_path: Path) -> list[dict]:
    k8s = tmp_path / "k8s"
    shutil.copytree(ROOT / "deploy" / "k8s", k8s)
    (k8s / "overlays" / "mtls").mkdir()
    (k8s / "overlays" / "mtls" / "kustomization.yaml").write_text(OVERLAY)
    result = subprocess.run(
        [*kustomize_command(), str(k8s / "overlays" / "mtls")], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    return [doc for doc in yaml.safe_load_all(result.stdout) if doc]


def test_k8s_mtls_component_mounts_each_services_secret_and_probes_with_it(tmp_path: Path) -> None:
    docs = render_with_mtls(tmp_path)
    assert not [d for d in docs if d["kind"] == "Secret"]
    workloads = {
        d["spec"]["template"]["spec"]["containers"][0]["command"][2]: d
        for d in docs
        if d["kind"] in {"Deployment", "StatefulSet"}
        and d["spec"]["template"]["spec"]["containers"][0]["command"][1] == "-m"
    }
    assert set(workloads) == set(runnable_services())
    for name, workload in workloads.items():
        pod = workload["spec"]["template"]["spec"]
        container = pod["containers"][0]
        env = {e["name"]: e.get("value") for e in container["env"]}
        assert env["TLS_DIR"] == "/etc/cardroom/tls", name
        (volume,) = [v for v in pod["volumes"] if v["name"] == "tls"]
        assert volume["secret"]["secretName"] == f"cardroom-tls-{name.replace('_', '-')}"
        assert {"name": "tls", "mountPath": "/etc/cardroom/tls", "readOnly": True} in container["volumeMounts"]
        for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
            if name == "gateway":  # the public port stays plain: the kubelet's gRPC probe still works
                assert "grpc" in container[probe] and "exec" not in container[probe]
            else:
                assert "grpc" not in container[probe], (name, probe)
                # startup and liveness: the process serves; readiness: HEALTH_SERVICE (its own name)
                extra = [] if probe == "readinessProbe" else [LIVENESS]
                assert container[probe]["exec"]["command"] == ["python", "-m", "cardroom.runtime.healthcheck", *extra]
        kubernetes_validate.validate(workload, kubernetes_validate.latest_version(), strict=True)  # raises
