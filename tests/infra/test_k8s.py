"""deploy/k8s rendered with a real kustomize and checked (issue 17): every overlay renders, every
object validates against the Kubernetes schemas (kubernetes-validate --strict), and static checks:
every workload hardened and probed, ports equal the services' defaults, every NAME_ADDR names a
Service, every ``python -m NAME`` exists, replica counts match each service's design, no Secret is
committed, and the network policies allow exactly the architecture's calls."""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import secrets
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import kubernetes_validate
import pytest
import yaml

from cardroom.runtime.production import production_problems
from cardroom.runtime.readiness import LIVENESS
from dealer.config import DealerConfig
from tests.infra.repo import ROOT, module_runs, python_m_targets, runnable_services, writes_data
from tests.infra.tools import kustomize_command
from tests.ports import free_port

K8S = ROOT / "deploy" / "k8s"
OVERLAYS = ("dev", "production-example")
TARGETS = ("base", *(f"overlays/{o}" for o in OVERLAYS))
#: The Kubernetes version the schemas are checked against: the newest kubernetes-validate bundles.
K8S_VERSION = kubernetes_validate.latest_version()
WORKLOADS = {"Deployment", "StatefulSet", "Job", "DaemonSet"}
#: By design (docs/operations.md): the stateless ones scale out, the dealer runs as a set of shards
#: (docs/sharding.md), the stateful ones run exactly once.
STATELESS = {"gateway", "evaluator"}
SHARDED = {"dealer"}
SINGLE_OWNER = {"wallet", "connection_monitor", "tournament"}
#: The partitions of the tables: the most dealer replicas that can each deal some (deploy/kafka/topics.yaml).
TABLE_PARTITIONS = next(
    t["partitions"]
    for t in yaml.safe_load((ROOT / "deploy" / "kafka" / "topics.yaml").read_text())["topics"]
    if t["name"] == "cardroom.table.snapshots"
)
#: The calls the architecture makes (issue 17): (caller, callee, port); "*" is any client.
CALLS = {
    ("*", "gateway", 20055),
    ("gateway", "dealer", 20053),
    ("gateway", "wallet", 20052),
    ("gateway", "connection-monitor", 20054),
    ("gateway", "tournament", 20056),  # the tournament lobby and the players' entries (issue 15)
    ("dealer", "wallet", 20052),
    ("dealer", "evaluator", 20051),
    ("dealer", "connection-monitor", 20054),
    ("tournament", "wallet", 20052),
    ("tournament", "dealer", 20053),  # its tables on the dealer (TournamentTables, issue 15)
    *(
        (name, "kafka", 9092)
        for name in ("evaluator", "wallet", "connection-monitor", "dealer", "gateway", "tournament", "kafka-topics")
    ),
    ("wallet", "postgres", 5432),
    ("gateway", "postgres", 5432),  # the player accounts (issue 14 item 2)
    # cardroom bots: through the gateway only (its operator API creates tables and funds the bots).
    ("load-generator", "gateway", 20055),
    # The browser client (issue 18): browsers reach Envoy, Envoy the gateway's public port.
    ("*", "web", 8080),
    ("web", "gateway", 20055),
}
#: The Kafka users (deploy/kafka/acls.yaml) and the broker's super user: one key each of KAFKA_USERS_SECRET.
ACL_USERS = frozenset(yaml.safe_load((ROOT / "deploy" / "kafka" / "acls.yaml").read_text())["users"])
KAFKA_USERS = ACL_USERS | {"admin"}
KAFKA_USERS_SECRET = "cardroom-kafka-users"
SECRETS = {
    ("cardroom-gateway", "secret"),
    ("cardroom-gateway", "operator-token"),
    ("cardroom-gateway", "accounts-dsn"),
    ("cardroom-wallet-db", "dsn"),
    ("cardroom-postgres", "password"),
    *((KAFKA_USERS_SECRET, user) for user in KAFKA_USERS),
}


@cache
def render(target: str) -> tuple[dict, ...]:
    result = subprocess.run([*kustomize_command(), str(K8S / target)], check=False, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return tuple(doc for doc in yaml.safe_load_all(result.stdout) if doc)


def objects(target: str, *kinds: str) -> list[dict]:
    return [o for o in render(target) if not kinds or o["kind"] in kinds]


def pod_spec(workload: dict) -> dict:
    return workload["spec"]["template"]["spec"]


def containers(workload: dict) -> list[dict]:
    spec = pod_spec(workload)
    return [*spec.get("initContainers", []), *spec["containers"]]


def env_of(container: dict) -> dict[str, dict]:
    return {e["name"]: e for e in container.get("env", [])}


def service_workloads(target: str) -> dict[str, dict]:
    """Cardroom service workloads by service name (``python -m NAME``)."""
    found = {}
    for workload in objects(target, "Deployment", "StatefulSet"):
        for module in python_m_targets(pod_spec(workload)["containers"][0].get("command", [])):
            found[module] = workload
    return found


#: The exec probe of a service whose port is mutual TLS (components/mtls).
HEALTHCHECK = ["python", "-m", "cardroom.runtime.healthcheck"]
TLS_MOUNT = "/etc/cardroom/tls"


def mutual_tls(container: dict) -> bool:
    return "TLS_DIR" in env_of(container)


def grpc_service_name(service: str) -> str:
    """The service's own gRPC service (``cardroom.v1.Gateway``, not its ``GatewayOperator``): the one
    whose name is the module's, in CamelCase."""
    module = importlib.import_module(f"cardroom.v1.{service}_pb2")
    camel = "".join(part.title() for part in service.split("_"))
    (name,) = [s.full_name for s in module.DESCRIPTOR.services_by_name.values() if s.name == camel]
    return name


@pytest.mark.parametrize("target", TARGETS)
def test_renders_and_every_object_validates_strictly(target):
    custom = []
    for obj in render(target):
        if obj["apiVersion"].startswith("monitoring.coreos.com/"):
            custom.append(obj)  # Prometheus Operator CRDs: no bundled schema; checked in test_monitoring
            continue
        try:
            kubernetes_validate.validate(obj, K8S_VERSION, strict=True)
        except kubernetes_validate.ValidationError as exc:
            pytest.fail(f"{target}: {obj['kind']}/{obj['metadata']['name']}: {exc.message} at {list(exc.path)}")
    assert all(o["kind"] in {"PodMonitor", "PrometheusRule"} for o in custom)


@pytest.mark.parametrize("target", TARGETS)
def test_one_workload_per_runnable_service_and_nothing_that_does_not_exist(target):
    assert set(service_workloads(target)) == set(runnable_services())
    for workload in objects(target, *WORKLOADS):
        for container in containers(workload):
            command = [*container.get("command", []), *container.get("args", [])]
            for module in python_m_targets(command):
                assert module_runs(module), f"{workload['metadata']['name']}: python -m {module} does not exist"
            if command[:2] == ["python", "deploy/kafka/admin.py"]:
                assert (ROOT / command[1]).is_file()
                if "apply" in command:
                    assert (ROOT / command[command.index("apply") + 1]).is_file()


@pytest.mark.parametrize("target", TARGETS)
def test_every_pod_is_hardened(target):
    accounts = {o["metadata"]["name"]: o for o in objects(target, "ServiceAccount")}
    for workload in objects(target, *WORKLOADS):
        name, spec = workload["metadata"]["name"], pod_spec(workload)
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] > 0, name
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert spec["automountServiceAccountToken"] is False, name
        assert accounts[spec["serviceAccountName"]]["automountServiceAccountToken"] is False, name
        mounts_tmp = False
        for container in containers(workload):
            sc = container["securityContext"]
            assert sc["allowPrivilegeEscalation"] is False, name
            assert sc["readOnlyRootFilesystem"] is True, name
            assert sc.get("privileged", False) is False, name
            assert sc["capabilities"]["drop"] == ["ALL"] and "add" not in sc["capabilities"], name
            for kind in ("requests", "limits"):
                assert {"cpu", "memory"} <= set(container["resources"][kind]), f"{name}: {kind}"
            mounts_tmp |= any(m["mountPath"] == "/tmp" for m in container.get("volumeMounts", []))
        if container["image"].startswith(("cardroom", "registry.example.com/cardroom")):
            assert pod["runAsUser"] == 10001, f"{name}: not the image's uid (deploy/docker/Dockerfile)"
        if workload["kind"] != "Job" or "load" in name:
            assert mounts_tmp, f"{name}: read-only root without a writable /tmp (emptyDir)"


@pytest.mark.parametrize("target", TARGETS)
def test_services_probed_by_native_grpc_on_their_default_ports(target):
    env = objects(target, "ConfigMap")
    common = next(c for c in env if c["metadata"]["name"] == "cardroom-env")["data"]
    shutdown = float(common["SHUTDOWN_DELAY"]) + float(common["SHUTDOWN_GRACE"])
    services = {s["metadata"]["name"]: s for s in objects(target, "Service")}
    for name, workload in service_workloads(target).items():
        grpc_port, metrics_port = runnable_services()[name]
        container = pod_spec(workload)["containers"][0]
        ports = {p["name"]: p["containerPort"] for p in container["ports"]}
        assert ports == {"grpc": grpc_port, "metrics": metrics_port}, name
        env = env_of(container)
        assert env["GRPC_PORT"]["value"] == str(grpc_port) and env["METRICS_PORT"]["value"] == str(metrics_port)
        # Live as soon as it serves, ready once its servicers may answer (the dealer restores first:
        # cardroom.runtime.readiness), so a dealer waiting for Kafka is not restarted in a loop.
        if mutual_tls(container) and name != "gateway":
            # The kubelet's gRPC probe cannot present a certificate: the same checks, run in the pod
            # with its own (python -m cardroom.runtime.healthcheck [SERVICE], HEALTH_SERVICE by default).
            for probe in ("startupProbe", "livenessProbe"):
                assert container[probe]["exec"]["command"] == [*HEALTHCHECK, LIVENESS], (name, probe)
            assert container["readinessProbe"]["exec"]["command"] == HEALTHCHECK, name
            assert env["HEALTH_SERVICE"]["value"] == grpc_service_name(name), name
            assert not any("grpc" in container[p] for p in ("startupProbe", "livenessProbe", "readinessProbe"))
        else:  # no TLS, or the gateway's public port (plain; its internal clients present certificates)
            for probe in ("startupProbe", "livenessProbe"):
                assert container[probe]["grpc"] == {"port": grpc_port, "service": LIVENESS}, (name, probe)
            ready = container["readinessProbe"]["grpc"]
            assert ready == {"port": grpc_port, "service": grpc_service_name(name)}, name
        assert pod_spec(workload)["terminationGracePeriodSeconds"] > shutdown + 5, name
        if name == "dealer":  # its SIGTERM drain lets hands finish first (the config's default unless set)
            drain = float(env.get("DEALER_DRAIN_SECONDS", {}).get("value", DealerConfig.drain_seconds))
            grace = float(common["SHUTDOWN_GRACE"])
            assert (
                pod_spec(workload)["terminationGracePeriodSeconds"]
                > max(drain, float(common["SHUTDOWN_DELAY"])) + grace + 5
            )
        service = services[workload["metadata"]["name"]]
        assert {(p["name"], p["port"]) for p in service["spec"]["ports"]} == {
            ("grpc", grpc_port),
            ("metrics", metrics_port),
        }
        labels = workload["spec"]["template"]["metadata"]["labels"]
        assert service["spec"]["selector"].items() <= labels.items(), name


@pytest.mark.parametrize("target", [f"overlays/{o}" for o in OVERLAYS])
def test_every_overlay_runs_mutual_tls_each_service_with_its_own_certificate(target):
    """Issue 14 item 1 ("service-to-service authentication on gRPC: mutual TLS ... k8s Secrets in the
    manifests"): every service mounts the Secret of its own identity, read-only, readable by its
    group only, at TLS_DIR; the one CA and the per-identity files are what cardroom.runtime.pki makes."""
    assert module_runs("cardroom.runtime.healthcheck") and module_runs("cardroom.runtime.pki")
    workloads = service_workloads(target)
    assert set(workloads) == set(runnable_services())
    for name, workload in workloads.items():
        spec = pod_spec(workload)
        container = spec["containers"][0]
        assert env_of(container)["TLS_DIR"]["value"] == TLS_MOUNT, name
        mount = next(m for m in container["volumeMounts"] if m["mountPath"] == TLS_MOUNT)
        assert mount["readOnly"] is True, name
        volume = next(v for v in spec["volumes"] if v["name"] == mount["name"])
        secret = volume["secret"]["secretName"]
        assert secret == f"cardroom-tls-{name.replace('_', '-')}", f"{name} mounts another identity's certificate"
        assert volume["secret"]["defaultMode"] == 0o440 and spec["securityContext"]["fsGroup"] > 0, name
    docs = (ROOT / "docs" / "operations.md").read_text()
    assert "cardroom-tls-" in docs and "python -m cardroom.runtime.pki" in docs


def test_production_example_passes_the_services_own_production_checks():
    """CARDROOM_MODE=production everywhere, and each service's environment (secrets as the cluster
    would give them) passes cardroom.runtime.production: the pods would start, not refuse."""
    common = next(
        c for c in objects("overlays/production-example", "ConfigMap") if c["metadata"]["name"] == "cardroom-env"
    )
    assert common["data"]["CARDROOM_MODE"] == "production"
    for name, workload in service_workloads("overlays/production-example").items():
        env = dict(common["data"])
        for entry in pod_spec(workload)["containers"][0].get("env", []):
            # a Secret's value is made with `openssl rand -hex 32` (docs/operations.md): stand in for it
            env[entry["name"]] = entry.get("value", "0123456789abcdef" * 4 if "valueFrom" in entry else "")
        assert production_problems(name, env) == [], name
    # The dev overlay is not in production mode: its gateway grants play money to new accounts.
    dev = next(c for c in objects("overlays/dev", "ConfigMap") if c["metadata"]["name"] == "cardroom-env")
    assert dev["data"].get("CARDROOM_MODE", "") != "production"


@pytest.mark.parametrize("target", TARGETS)
def test_every_addr_names_a_service_on_that_port(target):
    services = {s["metadata"]["name"]: s for s in objects(target, "Service")}
    env = {}
    for config in objects(target, "ConfigMap"):
        env.update(config.get("data", {}))
    addrs = {k: v for k, v in env.items() if k.endswith("_ADDR")}
    assert {"EVALUATOR_ADDR", "WALLET_ADDR", "DEALER_ADDR", "CONNECTION_MONITOR_ADDR", "TOURNAMENT_ADDR"} <= set(addrs)
    for key, value in addrs.items():
        host, port = value.rsplit(":", 1)
        assert host in services, f"{key}={value}: no Service {host}"
        assert int(port) in {p["port"] for p in services[host]["spec"]["ports"]}, f"{key}={value}"
    if target == "overlays/dev":
        host, port = env["KAFKA_BOOTSTRAP"].rsplit(":", 1)
        assert host in services and int(port) in {p["port"] for p in services[host]["spec"]["ports"]}


@pytest.mark.parametrize("target", TARGETS)
def test_replicas_and_update_strategy_follow_each_services_design(target):
    workloads = service_workloads(target)
    hpas = {h["spec"]["scaleTargetRef"]["name"]: h for h in objects(target, "HorizontalPodAutoscaler")}
    pdbs = {
        p["spec"]["selector"]["matchLabels"]["app.kubernetes.io/name"] for p in objects(target, "PodDisruptionBudget")
    }
    for name, workload in workloads.items():
        dns = workload["metadata"]["name"]
        if name in SINGLE_OWNER:  # one ledger writer; one allowance DB; one tournament command log
            assert workload["kind"] == "StatefulSet" and workload["spec"]["replicas"] == 1, name
            assert dns not in hpas and dns not in pdbs, name
        elif name in SHARDED:  # independent replicas, evicted with a PDB; scaled by hand (partitions move)
            assert workload["kind"] == "StatefulSet", name
            assert 2 <= workload["spec"]["replicas"] <= TABLE_PARTITIONS, name
            assert workload["spec"]["podManagementPolicy"] == "Parallel", name
            assert dns in pdbs and dns not in hpas, name
        else:
            assert name in STATELESS and workload["kind"] == "Deployment", name
            assert workload["spec"]["strategy"]["rollingUpdate"]["maxUnavailable"] == 0
            assert dns in hpas and dns in pdbs, name
            assert hpas[dns]["spec"]["scaleTargetRef"]["kind"] == "Deployment"
        if name == "gateway":  # its accounts are shared by the replicas: in PostgreSQL, not on a volume
            container = pod_spec(workload)["containers"][0]
            assert env_of(container)["GATEWAY_ACCOUNTS_DSN"]["valueFrom"]["secretKeyRef"]["name"] == "cardroom-gateway"
        elif writes_data(name):
            container = pod_spec(workload)["containers"][0]
            data_dir = env_of(container)["DATA_DIR"]["value"]
            mount = next(m for m in container["volumeMounts"] if m["mountPath"] == data_dir)
            claims = {c["metadata"]["name"] for c in workload["spec"].get("volumeClaimTemplates", [])}
            assert mount["name"] in claims, f"{name}: DATA_DIR is not a persistent volume"


@pytest.mark.parametrize("target", TARGETS)
def test_the_dealer_runs_as_a_set_of_shards_routed_by_the_directory(target):
    """Issue 16 ("compose and the k8s manifests run the dealer as a scalable set"): at least two dealer
    replicas, each with DEALER_SHARDS=on, claiming its partitions under its own pod's IP (the downward API's
    status.podIP, on the gRPC port) and its pod's name; the dealers, the gateway and the tournament service
    share one directory topic (the catalogue's, granted by the ACLs), DEALER_ADDR stays the fallback, and
    a PodDisruptionBudget lets one replica go at a time (or, in dev, every one on a single node)."""
    workloads = service_workloads(target)
    dealer = workloads["dealer"]
    assert dealer["spec"]["replicas"] >= 2
    container = pod_spec(dealer)["containers"][0]
    env = env_of(container)
    assert env["DEALER_SHARDS"]["value"] == "on"
    assert env["POD_IP"]["valueFrom"] == {"fieldRef": {"fieldPath": "status.podIP"}}
    grpc_port = runnable_services()["dealer"][0]
    assert env["DEALER_ADVERTISE_ADDR"]["value"] == f"$(POD_IP):{grpc_port}"
    names = [e["name"] for e in container["env"]]
    assert names.index("POD_IP") < names.index("DEALER_ADVERTISE_ADDR")  # $(VAR) expands earlier entries only
    assert env["DEALER_REPLICA"]["valueFrom"] == {"fieldRef": {"fieldPath": "metadata.name"}}
    common = next(c for c in objects(target, "ConfigMap") if c["metadata"]["name"] == "cardroom-env")["data"]
    directory = common["DEALER_DIRECTORY_TOPIC"]
    assert directory == DealerConfig.directory_topic  # the topic the dealers claim in (their default)
    assert common["DEALER_ADDR"] == f"dealer:{grpc_port}"
    for name in ("dealer", "gateway", "tournament"):  # from the shared environment, overridden by none
        spec = pod_spec(workloads[name])
        assert {"configMapRef": {"name": "cardroom-env"}} in spec["containers"][0]["envFrom"], name
        assert "DEALER_DIRECTORY_TOPIC" not in env_of(spec["containers"][0]), name
    catalogue = yaml.safe_load((ROOT / "deploy" / "kafka" / "topics.yaml").read_text())["topics"]
    assert directory in {t["name"] for t in catalogue}  # created by the kafka-topics Job (it applies topics.yaml)
    acls = yaml.safe_load((ROOT / "deploy" / "kafka" / "acls.yaml").read_text())["users"]
    assert directory in acls["dealer"]["write"] and directory in acls["dealer"]["read"]
    assert all(directory in acls[name]["read"] for name in ("gateway", "tournament"))
    (pdb,) = [p for p in objects(target, "PodDisruptionBudget") if p["metadata"]["name"] == "dealer"]
    assert pdb["spec"]["selector"]["matchLabels"].items() <= dealer["spec"]["template"]["metadata"]["labels"].items()
    assert "minAvailable" not in pdb["spec"]
    expected = "100%" if target == "overlays/dev" else 1
    assert pdb["spec"]["maxUnavailable"] == expected
    text = (K8S / "base" / "dealer.yaml").read_text()
    assert "Single owner" not in text and "exactly one pod" not in text


@pytest.mark.parametrize("target", TARGETS)
def test_secrets_are_referenced_never_committed(target):
    assert not objects(target, "Secret")
    referenced = set()
    mounted = set()  # whole Secrets mounted as volumes (certificates, the broker's Kafka users)
    for workload in objects(target, *WORKLOADS):
        for container in containers(workload):
            for entry in container.get("env", []):
                ref = entry.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    referenced.add((ref["name"], ref["key"]))
        mounted |= {v["secret"]["secretName"] for v in pod_spec(workload).get("volumes", []) if "secret" in v}
    assert referenced <= SECRETS
    assert ("cardroom-gateway", "secret") in referenced
    docs = (ROOT / "docs" / "operations.md").read_text()
    for name, key in referenced:
        assert name in docs and f"`{key}`" in docs, f"docs/operations.md does not say how to create {name} {key}"
    for name in mounted:
        assert name.startswith("cardroom-tls-") or name == KAFKA_USERS_SECRET, name
        assert (name if name == KAFKA_USERS_SECRET else "cardroom-tls-") in docs, name
    # No password reaches a pod except from a Secret: no literal KAFKA_PASSWORD, none in a ConfigMap.
    for workload in objects(target, *WORKLOADS):
        for container in containers(workload):
            assert "value" not in env_of(container).get("KAFKA_PASSWORD", {}), workload["metadata"]["name"]
    for config in objects(target, "ConfigMap"):
        assert not {"KAFKA_PASSWORD", "KAFKA_PASSWORD_FILE"} & set(config.get("data", {})), config["metadata"]["name"]


def _selects(selector: dict, labels: dict) -> bool:
    return selector.get("matchLabels", {}).items() <= labels.items()


def _pods(target: str) -> dict[str, dict]:
    return {
        w["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"]: w["spec"]["template"]["metadata"][
            "labels"
        ]
        for w in objects(target, *WORKLOADS)
    }


def _port_number(port, container_ports: dict[str, int]) -> int:
    return container_ports[port] if isinstance(port, str) else port


def allowed_calls(target: str) -> set[tuple[str, str, int]]:
    """(caller, callee, port) pairs that both the caller's egress and the callee's ingress allow,
    in-namespace, from the rendered policies (the "*" caller is any client outside the namespace)."""
    policies = objects(target, "NetworkPolicy")
    pods = _pods(target)
    assert any(
        p["spec"]["podSelector"] == {}
        and set(p["spec"]["policyTypes"]) == {"Ingress", "Egress"}
        and not p["spec"].get("ingress")
        and not p["spec"].get("egress")
        for p in policies
    ), "no deny-all"

    def rules(pod: str, direction: str) -> list[dict]:
        key = "ingress" if direction == "Ingress" else "egress"
        return [
            r
            for p in policies
            if direction in p["spec"]["policyTypes"] and _selects(p["spec"]["podSelector"], pods[pod])
            for r in p["spec"].get(key, [])
        ]

    calls = set()
    for callee in pods:
        for rule in rules(callee, "Ingress"):
            peers = rule.get("from")
            ports = [p["port"] for p in rule.get("ports", [])]
            if any(isinstance(p, str) for p in ports):  # the metrics scrape from the monitoring namespace
                assert ports == ["metrics"] and all("namespaceSelector" in peer for peer in peers)
                continue
            callers = (
                ["*", *pods]
                if not peers
                else [
                    c
                    for c in pods
                    for peer in peers
                    if "podSelector" in peer
                    and "namespaceSelector" not in peer
                    and _selects(peer["podSelector"], pods[c])
                ]
            )
            for caller in callers:
                for port in ports:
                    if caller == "*" or any(
                        port in [q["port"] for q in egress.get("ports", [])]
                        and any(
                            "podSelector" in peer and _selects(peer["podSelector"], pods[callee])
                            for peer in egress.get("to", [])
                        )
                        for egress in rules(caller, "Egress")
                    ):
                        calls.add((caller, callee, port))
    return calls


@pytest.mark.parametrize("target", ("overlays/dev",))
def test_network_policies_allow_exactly_the_architectures_calls(target):
    pods = set(_pods(target))
    expected = {c for c in CALLS if c[1] in pods and c[0] in pods | {"*"}}
    assert allowed_calls(target) == expected


def test_production_example_reaches_its_external_kafka():
    policies = {p["metadata"]["name"]: p for p in objects("overlays/production-example", "NetworkPolicy")}
    for pod in ("evaluator", "wallet", "connection-monitor", "dealer", "gateway", "tournament", "kafka-topics"):
        assert any(
            "ipBlock" in peer and {"protocol": "TCP", "port": 9092} in rule["ports"]
            for rule in policies[pod]["spec"]["egress"]
            for peer in rule["to"]
        ), pod
    # ... and keeps every in-namespace call of the base policies.
    assert {c for c in allowed_calls("overlays/production-example") if c[1] != "kafka"} == {
        c for c in CALLS if c[1] not in {"kafka"} and "load-generator" not in c
    }


ADMIN_PY = ["python", "deploy/kafka/admin.py"]


def kafka_topics_containers(target: str) -> list[dict]:
    (job,) = [j for j in objects(target, "Job") if j["metadata"]["name"] == "kafka-topics"]
    return containers(job)


def secret_env(container: dict, secrets: dict[str, dict[str, str]]) -> dict[str, str]:
    """The container's own ``env`` as the kubelet would set it, Secrets taken from ``secrets``."""
    env = {}
    for name, entry in env_of(container).items():
        ref = entry.get("valueFrom", {}).get("secretKeyRef")
        env[name] = secrets[ref["name"]][ref["key"]] if ref else entry["value"]
    return env


@pytest.mark.parametrize("target", [f"overlays/{o}" for o in OVERLAYS])
def test_every_service_authenticates_to_kafka_as_its_own_user(target):
    """Issue 14 item 1 ("Kafka with authentication and ACLs"; principle 4: producers and consumers are
    authenticated and checked): in both overlays (components/kafka-auth) every service's container logs in
    as the user named for it in deploy/kafka/acls.yaml, its password from its own key of the Secret, and
    the topic Job logs in as admin and applies the ACL file as well as the catalogue."""
    workloads = service_workloads(target)
    assert set(workloads) == set(runnable_services()) and set(workloads) <= ACL_USERS
    for name, workload in workloads.items():
        env = env_of(pod_spec(workload)["containers"][0])
        assert env["KAFKA_USERNAME"]["value"] == name, f"{name} logs in to Kafka as another user"
        ref = env["KAFKA_PASSWORD"]["valueFrom"]["secretKeyRef"]
        assert ref == {"name": KAFKA_USERS_SECRET, "key": name}, name
        assert "KAFKA_PASSWORD_FILE" not in env, name
    jobs = kafka_topics_containers(target)
    assert {c["name"] for c in jobs} == {"wait-for-kafka", "apply-topics"}
    for container in jobs:  # the broker answers nobody else: waiting needs the login too
        env = env_of(container)
        assert env["KAFKA_USERNAME"]["value"] == "admin", container["name"]
        assert env["KAFKA_PASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": KAFKA_USERS_SECRET, "key": "admin"}
    (apply,) = [c for c in jobs if c["name"] == "apply-topics"]
    command = apply["command"]
    assert command[:2] == ADMIN_PY and command[command.index("apply") + 1] == "deploy/kafka/topics.yaml"
    assert command[command.index("--acls") + 1] == "deploy/kafka/acls.yaml"
    # The base alone (no component) authenticates nobody: the overlays choose it.
    assert not any("KAFKA_USERNAME" in env_of(c) for w in objects("base", *WORKLOADS) for c in containers(w))
    docs = (ROOT / "docs" / "operations.md").read_text()
    assert "components/kafka-auth" in docs and "admin.py" in docs and "acls.yaml" in docs


def properties(text: str) -> dict[str, str]:
    found = {}
    for line in text.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            key, _, value = line.partition("=")
            found[key.strip()] = value.strip()
    return found


@dataclass(frozen=True)
class DevBroker:
    """The dev overlay's broker: its container, the files of its config ConfigMap, its volumes and
    their mount paths by volume name."""

    container: dict
    files: dict[str, str]
    volumes: dict[str, dict]
    mounts: dict[str, str]


def dev_broker() -> DevBroker:
    (kafka,) = [o for o in objects("overlays/dev", "StatefulSet") if o["metadata"]["name"] == "kafka"]
    (container,) = pod_spec(kafka)["containers"]
    volumes = {v["name"]: v for v in pod_spec(kafka)["volumes"]}
    (config,) = [
        o
        for o in objects("overlays/dev", "ConfigMap")
        if o["metadata"]["name"] == volumes["config"]["configMap"]["name"]
    ]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    return DevBroker(container, config["data"], volumes, mounts)


def test_dev_broker_requires_scram_and_allows_only_the_acls():
    """components/kafka: the client listener is SASL/SCRAM-SHA-512 only, the StandardAuthorizer allows
    nothing the ACLs do not grant, admin is the super user (its password from the Secret, never in the
    ConfigMap), the users are made at format time from every key of the Secret, and the controller
    listener (ANONYMOUS, a super user) is bound to the pod's loopback and not in the Service."""
    broker = dev_broker()
    container, files, mounts = broker.container, broker.files, broker.mounts
    props = properties(files["server.properties"])
    protocols = dict(pair.split(":") for pair in props["listener.security.protocol.map"].split(","))
    listeners = dict(entry.split("://") for entry in props["listeners"].split(","))
    controller = props["controller.listener.names"]
    assert set(listeners) == {"SASL_PLAINTEXT", controller}
    assert listeners[controller].startswith("localhost:") and protocols[controller] == "PLAINTEXT"
    assert {protocols[name] for name in listeners if name != controller} == {"SASL_PLAINTEXT"}
    assert all(e.startswith("SASL_PLAINTEXT://") for e in props["advertised.listeners"].split(","))
    assert props["inter.broker.listener.name"] == "SASL_PLAINTEXT"
    assert props["sasl.enabled.mechanisms"] == "SCRAM-SHA-512" == props["sasl.mechanism.inter.broker.protocol"]
    assert props["authorizer.class.name"] == "org.apache.kafka.metadata.authorizer.StandardAuthorizer"
    assert props["allow.everyone.if.no.acl.found"] == "false"
    assert set(props["super.users"].split(";")) == {"User:admin", "User:ANONYMOUS"}
    # admin's password: read from the mounted Secret by Kafka's DirectoryConfigProvider, never written.
    users = mounts["users"]
    secret = broker.volumes["users"]["secret"]
    assert secret["secretName"] == KAFKA_USERS_SECRET and secret["defaultMode"] == 0o440
    assert next(m for m in container["volumeMounts"] if m["name"] == "users")["readOnly"] is True
    for name in ("server.properties", "admin.properties"):
        text = properties(files[name])
        provider = text["config.providers"]
        assert text[f"config.providers.{provider}.class"].endswith(".DirectoryConfigProvider"), name
        assert text[f"config.providers.{provider}.param.allowed.paths"] == users, name
        (jaas,) = [v for k, v in text.items() if k.endswith("sasl.jaas.config")]
        assert 'username="admin"' in jaas and f'password="${{{provider}:{users}:admin}}"' in jaas, name
    # start.sh (the container's command) formats with --add-scram for every key of the Secret.
    config_dir = mounts["config"]
    assert container["command"] == ["/bin/sh", f"{config_dir}/start.sh"]
    script = files["start.sh"]
    assert f"KAFKA_CONFIG:-{config_dir}/server.properties" in script and f"KAFKA_USERS_DIR:-{users}" in script
    assert "--add-scram" in script and 'for file in "$users"/*' in script
    (service,) = [s for s in objects("overlays/dev", "Service") if s["metadata"]["name"] == "kafka"]
    assert [p["port"] for p in service["spec"]["ports"]] == [int(listeners["SASL_PLAINTEXT"].rsplit(":", 1)[1])]
    assert props["log.dirs"] == mounts["data"]


def run_start_script(tmp_path: Path, users: dict[str, str]) -> tuple[subprocess.CompletedProcess[str], Path]:
    """Run the broker's rendered start.sh with stand-ins for the image's two commands that only record
    their arguments (one line each) in ``calls``."""
    broker = dev_broker()
    tmp_path.mkdir()
    script = tmp_path / "start.sh"
    script.write_text(broker.files["start.sh"])
    users_dir = tmp_path / "users"
    users_dir.mkdir()
    for user, password in users.items():
        (users_dir / user).write_text(password)
    calls = tmp_path / "calls"
    (tmp_path / "bin").mkdir()
    for name in ("kafka-storage.sh", "kafka-server-start.sh"):
        (tmp_path / "bin" / name).write_text(f'#!/bin/sh\nprintf "{name} %s\\n" "$*" >> "{calls}"\n')
        (tmp_path / "bin" / name).chmod(0o755)
    env = {
        "PATH": os.environ["PATH"],
        **secret_env(broker.container, {}),
        "KAFKA_HOME": str(tmp_path),
        "KAFKA_CONFIG": "server.properties",
        "KAFKA_USERS_DIR": str(users_dir),
    }
    result = subprocess.run(["/bin/sh", str(script)], env=env, capture_output=True, text=True, check=False)
    return result, calls


def test_dev_broker_start_script_makes_a_user_per_key_and_refuses_what_kafka_would_misread(tmp_path):
    """start.sh formats once (--ignore-formatted) with the manifest's CLUSTER_ID and one SCRAM-SHA-512
    user per file of the users' Secret, then runs the broker; it refuses a password file ending with a
    newline (Kafka reads admin's verbatim), characters --add-scram cannot carry, and a Secret without
    admin, before Kafka is started at all."""
    passwords = {user: secrets.token_hex(24) for user in KAFKA_USERS}
    result, calls = run_start_script(tmp_path / "ok", passwords)
    assert result.returncode == 0, result.stderr
    storage, server = calls.read_text().splitlines()
    cluster_id = env_of(dev_broker().container)["CLUSTER_ID"]["value"]
    assert storage.startswith(f"kafka-storage.sh format --ignore-formatted -t {cluster_id} -c server.properties ")
    made = re.findall(r"--add-scram SCRAM-SHA-512=\[name=([^,]+),password=([^\]]+)\]", storage)
    assert dict(made) == passwords
    assert server == "kafka-server-start.sh server.properties"
    for bad, reason in (
        ({**passwords, "dealer": passwords["dealer"] + "\n"}, "newline"),
        ({**passwords, "dealer": "a,b]c"}, "may hold only"),
        ({u: p for u, p in passwords.items() if u != "admin"}, "admin"),
    ):
        result, calls = run_start_script(tmp_path / reason.replace(" ", "-"), bad)
        assert result.returncode == 2 and reason in result.stderr, result.stderr
        assert not calls.exists(), "Kafka was started"


def local_broker_files(files: dict[str, str], mounts: dict[str, str], local: dict[str, Path], ports: dict[int, int]):
    """The ConfigMap's files for a broker on this machine: only the listeners' hosts and ports and the
    mount paths (data, users' Secret, config) change; every other line is the manifest's."""
    out = {}
    for name, text in files.items():
        lines = []
        for line in text.splitlines():
            key, sep, value = line.partition("=")
            if name.endswith(".properties") and key in {
                "listeners",
                "advertised.listeners",
                "controller.quorum.voters",
            }:
                value = re.sub(r"(?<=[/@])[^:/@,]*:(\d+)", lambda m: f"127.0.0.1:{ports[int(m.group(1))]}", value)
                line = key + sep + value
            for volume in ("data", "users", "config"):
                line = line.replace(mounts[volume], str(local[volume]))
            lines.append(line)
        out[name] = "\n".join(lines) + "\n"
    return out


def wait_until_the_broker_enforces(bootstrap: str, credentials, acls_file: Path, timeout: float = 120) -> None:
    """Until the broker (not only its controller) holds every binding of the ACL file: creating them
    returns once the controller has them, and the broker applies its metadata in order (after the
    partitions of the topics just created, which can take seconds on a loaded machine)."""
    from kafka import KafkaAdminClient
    from kafka.admin import (
        ACLFilter,
        ACLOperation,
        ACLPermissionType,
        ACLResourcePatternType,
        ResourcePatternFilter,
        ResourceType,
    )

    from cardroom.runtime.kafka_auth import client_settings

    spec = importlib.util.spec_from_file_location("kafka_admin", ROOT / "deploy" / "kafka" / "admin.py")
    assert spec is not None and spec.loader is not None
    kafka_admin = sys.modules.setdefault("kafka_admin", importlib.util.module_from_spec(spec))
    spec.loader.exec_module(kafka_admin)
    expected = len(  # distinct bindings (a topic both written and read is described once)
        {
            (a.principal, a.operation, a.resource_pattern.resource_type, a.resource_pattern.resource_name)
            for a in kafka_admin.load_acls(str(acls_file))
        }
    )
    everything = ACLFilter(
        None,
        None,
        ACLOperation.ANY,
        ACLPermissionType.ANY,
        ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
    )
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, **client_settings(credentials))
    try:
        deadline = time.monotonic() + timeout
        while len(admin.describe_acls(everything)[0]) < expected:
            assert time.monotonic() < deadline, f"the broker does not hold the {expected} ACLs of {acls_file}"
            time.sleep(0.5)
    finally:
        admin.close()


PROBE = """
import java.io.FileReader;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.clients.admin.Admin;

// The admin client config the compose health check gives kafka-broker-api-versions.sh (args: bootstrap, file).
public class Probe {
    public static void main(String[] args) throws Exception {
        Properties config = new Properties();
        try (FileReader reader = new FileReader(args[1])) { config.load(reader); }
        config.put("bootstrap.servers", args[0]);
        try (Admin admin = Admin.create(config)) {
            System.out.println(admin.describeCluster().clusterId().get(60, TimeUnit.SECONDS));
        }
    }
}
"""


@pytest.mark.slow
@pytest.mark.kafka
def test_dev_broker_from_the_manifest_authenticates_and_enforces_the_acls(tmp_path, monkeypatch):
    """The strongest proof for components/kafka + components/kafka-auth: the real Kafka broker (the jars
    deploy/kafka/kafka.sh runs) started by the pod's own command, start.sh, with the rendered ConfigMap
    (only listener hosts/ports and mount paths changed) and a users' Secret made as docs/operations.md
    says; the topic Job's own commands wait, apply the topics and the ACLs as admin; then services log in
    with the env the manifests give them (cardroom.runtime.kafka_auth): the dealer writes hand results,
    the wallet reads them in its group, each is refused (TOPIC_AUTHORIZATION_FAILED) on a topic that is
    not its own, and a client without credentials or with a wrong password gets nothing."""
    from kafka import KafkaProducer
    from kafka.errors import KafkaError, TopicAuthorizationFailedError

    from cardroom.runtime.consumer import ConsumerSettings, open_consumer
    from cardroom.runtime.events import EventProducer
    from cardroom.runtime.kafka_auth import KafkaCredentials, credentials_from_env
    from cardroom.v1 import events_pb2

    subprocess.run([str(ROOT / "deploy" / "kafka" / "kafka.sh"), "fetch"], check=True, cwd=ROOT)
    version = re.search(r"<kafka.version>(.+)</kafka.version>", (ROOT / "deploy" / "kafka" / "pom.xml").read_text())
    assert version
    libs = ROOT / ".cache" / "kafka" / version.group(1) / "libs"
    broker_spec = dev_broker()
    container, files, mounts = broker_spec.container, broker_spec.files, broker_spec.mounts
    local = {name: tmp_path / name for name in ("data", "users", "config", "home", "logs")}
    for path in local.values():
        path.mkdir()
    # The Secret, as `kubectl create secret generic cardroom-kafka-users --from-literal=NAME=...` makes it.
    passwords = {user: secrets.token_hex(24) for user in KAFKA_USERS}
    for user, password in passwords.items():
        (local["users"] / user).write_text(password)
    client, controller = free_port(), free_port()
    for name, text in local_broker_files(files, mounts, local, {9092: client, 9093: controller}).items():
        (local["config"] / name).write_text(text)
    # The image's two commands, as its bin scripts run them: the same main classes on the same jars.
    bin_dir = local["home"] / "bin"
    bin_dir.mkdir()
    log4j = ROOT / "deploy" / "kafka" / "log4j2.properties"
    shims = {
        "kafka-storage.sh": f'exec java -cp "{libs}/*" kafka.tools.StorageTool "$@"',
        "kafka-server-start.sh": f"exec java $KAFKA_HEAP_OPTS -Dlog4j2.configurationFile={log4j} "
        f'-Dkafka.logs.dir={local["logs"]} -cp "{libs}/*" kafka.Kafka "$@"',
    }
    for name, body in shims.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    command = [part.replace(mounts["config"], str(local["config"])) for part in container["command"]]
    env = secret_env(container, {})
    env.update(
        PATH=os.environ["PATH"],
        KAFKA_HOME=str(local["home"]),
        KAFKA_CONFIG=str(local["config"] / "server.properties"),
        KAFKA_USERS_DIR=str(local["users"]),
    )
    bootstrap = f"127.0.0.1:{client}"
    secrets_by_name = {KAFKA_USERS_SECRET: passwords}
    log = (tmp_path / "broker.log").open("w")
    broker = subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def run_job(container: dict) -> None:
        assert container["command"][0] == "python"
        argv = [sys.executable, *[a.replace("$(KAFKA_BOOTSTRAP)", bootstrap) for a in container["command"][1:]]]
        job_env = {**os.environ, **secret_env(container, secrets_by_name)}
        result = subprocess.run(argv, env=job_env, cwd=ROOT, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (container["name"], result.stderr[-2000:], broker_log())

    def broker_log() -> str:
        return (tmp_path / "broker.log").read_text()[-3000:]

    def service_credentials(name: str) -> KafkaCredentials:
        """What the service's process reads (cardroom.runtime.kafka_auth) from its rendered env."""
        container = pod_spec(service_workloads("overlays/dev")[name])["containers"][0]
        kafka_env = [e for e in container["env"] if e["name"].startswith("KAFKA_")]
        for key, value in secret_env({"env": kafka_env}, secrets_by_name).items():
            monkeypatch.setenv(key, value)
        found = credentials_from_env()
        assert found is not None and found.username == name
        return found

    def publish(credentials: KafkaCredentials, topic: str) -> None:
        producer = EventProducer(bootstrap, credentials.username, request_timeout_ms=15_000, credentials=credentials)
        try:
            producer.publish(
                topic, type="cardroom.test.v1", key="table-1", sequence=1, payload=events_pb2.EventEnvelope()
            )
        finally:
            producer.close(1)

    try:
        for job in kafka_topics_containers("overlays/dev"):  # wait-for-kafka, then apply-topics (--acls)
            run_job(job)
        admin = KafkaCredentials("admin", passwords["admin"])
        wait_until_the_broker_enforces(bootstrap, admin, ROOT / "deploy" / "kafka" / "acls.yaml")
        meta = (local["data"] / "meta.properties").read_text()
        assert f"cluster.id={env['CLUSTER_ID']}" in meta  # formatted with the manifest's CLUSTER_ID
        dealer, wallet = service_credentials("dealer"), service_credentials("wallet")
        publish(dealer, "cardroom.hand.settled")  # its own topic: acknowledged
        with pytest.raises(TopicAuthorizationFailedError):
            publish(dealer, "cardroom.wallet.ledger")  # the wallet's
        with pytest.raises(TopicAuthorizationFailedError):
            publish(wallet, "cardroom.hand.settled")  # a forged hand result
        # The wallet reads the dealer's record in its own consumer group, through the runtime's factory,
        # with its pod's environment.
        service_credentials("wallet")
        consumer = open_consumer(
            ConsumerSettings(bootstrap, ("cardroom.hand.settled",), "wallet-k8s", "wallet-k8s", "earliest")
        )
        try:
            records = []
            for _ in range(30):
                records += [r for batch in consumer.poll(timeout_ms=1000).values() for r in batch]
                if records:
                    break
            assert [r.key for r in records] == [b"table-1"]
        finally:
            consumer.close()
        unauthenticated = None
        with pytest.raises(KafkaError):  # no credentials: nothing at all
            unauthenticated = KafkaProducer(bootstrap_servers=bootstrap, max_block_ms=5000, request_timeout_ms=5000)
            unauthenticated.send("cardroom.hand.settled", b"forged").get(timeout=10)
        if unauthenticated is not None:
            unauthenticated.close(1)
        with pytest.raises(KafkaError):  # a wrong password
            wrong = KafkaCredentials("dealer", "not-" + passwords["dealer"])
            EventProducer(bootstrap, "dealer", request_timeout_ms=5000, credentials=wrong).close(1)
        # The compose health check's client config (admin.properties) logs in as admin.
        (tmp_path / "Probe.java").write_text(PROBE)
        probe = subprocess.run(
            [
                "java",
                "-cp",
                f"{libs}/*",
                str(tmp_path / "Probe.java"),
                bootstrap,
                str(local["config"] / "admin.properties"),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert probe.returncode == 0 and probe.stdout.strip(), probe.stdout + probe.stderr
    finally:
        os.killpg(broker.pid, signal.SIGTERM)
        try:
            broker.wait(60)
        except subprocess.TimeoutExpired:
            os.killpg(broker.pid, signal.SIGKILL)
            broker.wait(10)
        log.close()


@pytest.mark.parametrize("target", TARGETS)
def test_kubernetes_validate_cli_strict_accepts_the_render(target, tmp_path):
    """The same check with the command an operator runs: ``kubernetes-validate --strict``."""
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(yaml.safe_dump_all(render(target)))
    cli = Path(sys.executable).with_name("kubernetes-validate")
    result = subprocess.run(
        [str(cli), "--strict", "--quiet", "-k", K8S_VERSION, str(rendered)], check=False, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # Only the Prometheus Operator kinds have no bundled schema; everything else was validated.
    unknown = [line for line in (result.stdout + result.stderr).splitlines() if "Couldn't find schema" in line]
    assert all("PodMonitor" in line or "PrometheusRule" in line for line in unknown), unknown


@pytest.mark.parametrize("target", TARGETS)
def test_web_edge_runs_envoy_in_front_of_the_gateway_service(target):
    """The web Deployment (issue 18) starts deploy/envoy/render.py --exec with the gateway Service's
    gRPC port, listens on its container port, is probed on Envoy's /healthz and writes only to /tmp."""
    services = {s["metadata"]["name"]: s for s in objects(target, "Service")}
    (web,) = [w for w in objects(target, "Deployment") if w["metadata"]["name"] == "web"]
    container = pod_spec(web)["containers"][0]
    command = container["command"]
    assert command[:2] == ["python", "deploy/envoy/render.py"] and "--exec" in command
    assert (ROOT / command[1]).is_file()
    host, port = command[command.index("--gateway") + 1].rsplit(":", 1)
    assert host in services and int(port) in {p["port"] for p in services[host]["spec"]["ports"]}
    listen = int(command[command.index("--listen") + 1].rsplit(":", 1)[1])
    assert container["ports"] == [{"name": "http", "containerPort": listen}]
    for probe in ("readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": "/healthz", "port": "http"}, probe
    assert command[command.index("--out") + 1].startswith("/tmp/")
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
    assert container["image"].split("/")[-1].startswith("cardroom-web")
    assert {(p["name"], p["port"]) for p in services["web"]["spec"]["ports"]} == {("http", listen)}
