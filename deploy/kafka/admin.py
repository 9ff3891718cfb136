"""Kafka admin steps run by kafka.sh: wait for the broker, apply the topic catalogue.

    admin.py --bootstrap HOST:PORT [--pid PID] wait [--timeout S]
    admin.py --bootstrap HOST:PORT apply topics.yaml [--acls acls.yaml]
    admin.py --bootstrap HOST:PORT acls acls.yaml

With ``KAFKA_USERNAME`` and ``KAFKA_PASSWORD`` or ``KAFKA_PASSWORD_FILE`` set (kafka.sh sets the super
user's with KAFKA_AUTH=scram; the compose and Kubernetes topic jobs too) it authenticates with
SASL/SCRAM-SHA-512 (``cardroom.runtime.kafka_auth``, as the services do). ``acls`` (or ``apply --acls``,
after the topics) grants each user of the ACL file what it lists
(``users: {NAME: {write: [topics], read: [topics], groups: [group id prefixes]}}``), idempotently.

The catalogue is YAML: ``topics: [{name, partitions, retention_ms, cleanup_policy, configs?}]``
(``configs``: segment rolling and log-cleaner settings, see ``EXTRA_CONFIGS``).
Applying is idempotent: missing topics are created, partitions are only ever increased,
and retention / cleanup policy are set to the catalogue's values.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import time
from dataclasses import dataclass

import yaml
from kafka import KafkaAdminClient
from kafka.admin import (
    ACL,
    ACLFilter,
    ACLOperation,
    ACLPermissionType,
    ACLResourcePatternType,
    ConfigResource,
    ConfigResourceType,
    NewPartitions,
    NewTopic,
    ResourcePattern,
    ResourcePatternFilter,
    ResourceType,
)
from kafka.errors import KafkaError

from cardroom.runtime.kafka_auth import client_settings


@dataclass(frozen=True)
class TopicSpec:
    """One catalogue entry."""

    name: str
    partitions: int
    retention_ms: int
    cleanup_policy: str
    extra: tuple[tuple[str, str], ...] = ()  # further topic configs (the catalogue's ``configs``)

    def configs(self) -> dict[str, str]:
        return {"retention.ms": str(self.retention_ms), "cleanup.policy": self.cleanup_policy, **dict(self.extra)}


#: Topic configs a catalogue entry may set under ``configs`` (segment rolling and the log cleaner).
EXTRA_CONFIGS = frozenset(
    {
        "segment.ms",
        "segment.bytes",
        "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms",
        "max.compaction.lag.ms",
        "delete.retention.ms",
    }
)


def load_catalogue(path: str) -> list[TopicSpec]:
    """Read and check the topic catalogue file."""
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh) or {}
    specs = []
    for entry in doc.get("topics", []):
        spec = TopicSpec(
            name=str(entry["name"]),
            partitions=int(entry["partitions"]),
            retention_ms=int(entry["retention_ms"]),
            cleanup_policy=str(entry["cleanup_policy"]),
            extra=tuple(sorted((str(k), str(v)) for k, v in (entry.get("configs") or {}).items())),
        )
        unknown = {k for k, _ in spec.extra} - EXTRA_CONFIGS
        if unknown:
            raise ValueError(f"topic {spec.name}: configs not in the catalogue's list: {sorted(unknown)}")
        if spec.partitions < 1:
            raise ValueError(f"topic {spec.name}: partitions must be >= 1")
        if spec.cleanup_policy not in {"delete", "compact", "compact,delete", "delete,compact"}:
            raise ValueError(f"topic {spec.name}: unknown cleanup_policy {spec.cleanup_policy!r}")
        specs.append(spec)
    return specs


def security() -> dict[str, str]:
    """SASL/SCRAM settings from KAFKA_USERNAME and KAFKA_PASSWORD or KAFKA_PASSWORD_FILE (empty: plaintext)."""
    return client_settings()


def load_acls(path: str) -> list[ACL]:
    """The ACL file as kafka-python ACL bindings (ALLOW, any host)."""
    with open(path, encoding="utf-8") as fh:
        doc = yaml.safe_load(fh) or {}
    bindings = []
    for user, grants in (doc.get("users") or {}).items():
        principal = f"User:{user}"
        grants = grants or {}
        unknown = set(grants) - {"write", "read", "groups", "transactions"}
        if unknown:
            raise ValueError(f"acls {path}: user {user}: unknown keys {sorted(unknown)}")

        def allow(operation: ACLOperation, pattern: ResourcePattern, principal: str = principal) -> None:
            bindings.append(ACL(principal, "*", operation, ACLPermissionType.ALLOW, pattern))

        for topic in grants.get("write", []):
            for op in (ACLOperation.WRITE, ACLOperation.DESCRIBE):
                allow(op, ResourcePattern(ResourceType.TOPIC, topic, ACLResourcePatternType.LITERAL))
        for topic in grants.get("read", []):
            for op in (ACLOperation.READ, ACLOperation.DESCRIBE):
                allow(op, ResourcePattern(ResourceType.TOPIC, topic, ACLResourcePatternType.LITERAL))
        for group in grants.get("groups", []):
            allow(ACLOperation.READ, ResourcePattern(ResourceType.GROUP, group, ACLResourcePatternType.PREFIXED))
        for prefix in grants.get("transactions", []):
            for op in (ACLOperation.WRITE, ACLOperation.DESCRIBE):
                allow(op, ResourcePattern(ResourceType.TRANSACTIONAL_ID, prefix, ACLResourcePatternType.PREFIXED))
    return bindings


def apply_acls(bootstrap: str, path: str) -> int:
    bindings = load_acls(path)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000, **security())
    try:
        result = admin.create_acls(bindings)
        failed = result.get("failed", [])
        if failed:
            print(f"kafka: {len(failed)} ACLs failed: {failed}", file=sys.stderr)
            return 1
        # created is not yet enforced: the broker's authorizer applies them from the metadata log
        missing = _await_acls(admin, bindings)
    finally:
        admin.close()
    if missing:
        print(f"kafka: {len(missing)} ACLs not in force after 30 s: {sorted(missing)[:5]}", file=sys.stderr)
        return 1
    print(f"kafka: ACLs applied ({len(bindings)} bindings)", file=sys.stderr)
    return 0


def _key(acl: ACL) -> tuple[str, str, str, str, str]:
    pattern = acl.resource_pattern
    return (
        acl.principal,
        acl.operation.name,
        pattern.resource_type.name,
        pattern.resource_name,
        pattern.pattern_type.name,
    )


def _await_acls(admin: KafkaAdminClient, bindings: list[ACL], timeout: float = 30.0) -> set[tuple[str, ...]]:
    """Wait until the broker describes every binding (its authorizer has them); what is still missing."""
    everything = ACLFilter(
        principal=None,
        host="*",
        operation=ACLOperation.ANY,
        permission_type=ACLPermissionType.ANY,
        resource_pattern=ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY),
    )
    wanted = {_key(b) for b in bindings}
    deadline = time.monotonic() + timeout
    while True:
        described, _error = admin.describe_acls(everything)
        missing = wanted - {_key(a) for a in described}
        if not missing or time.monotonic() >= deadline:
            return missing
        time.sleep(0.2)


def _alive(pid: int | None) -> bool:
    if pid is None:
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def wait(bootstrap: str, timeout: float, pid: int | None) -> int:
    """Poll until the broker answers a metadata request; 0 when it does."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if not _alive(pid):
            print(f"kafka: broker process {pid} exited", file=sys.stderr)
            return 1
        try:
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000, **security())
            try:
                cluster = admin.describe_cluster()
                if cluster.get("controller_id", -1) != -1 or cluster.get("brokers"):
                    admin.list_topics()
                    return 0
            finally:
                admin.close()
        except (KafkaError, OSError, ValueError) as exc:
            last_error = exc
        time.sleep(0.5)
    print(
        f"kafka: no metadata answer from {bootstrap} within {timeout:.0f} s (last error: {last_error!r})",
        file=sys.stderr,
    )
    return 1


def apply(bootstrap: str, path: str) -> int:
    """Create or update every topic of the catalogue."""
    specs = load_catalogue(path)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000, **security())
    try:
        names = set(admin.list_topics())
        wanted = [s.name for s in specs if s.name in names]
        existing = {t["name"]: t for t in admin.describe_topics(wanted)} if wanted else {}
        missing = [s for s in specs if s.name not in existing]
        if missing:
            admin.create_topics(
                [NewTopic(s.name, s.partitions, 1, topic_configs=s.configs()) for s in missing], timeout_ms=30000
            )
        grow = {
            s.name: NewPartitions(s.partitions)
            for s in specs
            if s.name in existing and len(existing[s.name]["partitions"]) < s.partitions
        }
        if grow:
            admin.create_partitions(grow)
        present = [s for s in specs if s.name in existing]
        if present:
            admin.alter_configs(
                [ConfigResource(ConfigResourceType.TOPIC, s.name, configs=s.configs()) for s in present]
            )
    finally:
        admin.close()
    print(f"kafka: topic catalogue applied ({len(specs)} topics, {len(missing)} created)", file=sys.stderr)
    return 0


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.CRITICAL)  # connection refusals while waiting are expected
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bootstrap", required=True)
    parser.add_argument("--pid", type=int)
    sub = parser.add_subparsers(dest="cmd", required=True)
    p_wait = sub.add_parser("wait")
    p_wait.add_argument("--timeout", type=float, default=120.0)
    p_apply = sub.add_parser("apply")
    p_apply.add_argument("catalogue")
    p_apply.add_argument("--acls", help="then apply this ACL file too")
    p_acls = sub.add_parser("acls")
    p_acls.add_argument("acls")
    args = parser.parse_args(argv)
    if args.cmd == "wait":
        return wait(args.bootstrap, args.timeout, args.pid)
    if args.cmd == "acls":
        return apply_acls(args.bootstrap, args.acls)
    status = apply(args.bootstrap, args.catalogue)
    if status == 0 and args.acls:
        status = apply_acls(args.bootstrap, args.acls)
    return status


if __name__ == "__main__":
    sys.exit(main())
