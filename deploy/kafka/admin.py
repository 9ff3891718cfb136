"""Kafka admin steps run by kafka.sh: wait for the broker, apply the topic catalogue.

    admin.py --bootstrap HOST:PORT [--pid PID] wait [--timeout S]
    admin.py --bootstrap HOST:PORT apply topics.yaml

The catalogue is YAML: ``topics: [{name, partitions, retention_ms, cleanup_policy}]``.
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
from kafka.admin import ConfigResource, ConfigResourceType, NewPartitions, NewTopic
from kafka.errors import KafkaError


@dataclass(frozen=True)
class TopicSpec:
    """One catalogue entry."""

    name: str
    partitions: int
    retention_ms: int
    cleanup_policy: str

    def configs(self) -> dict[str, str]:
        return {"retention.ms": str(self.retention_ms), "cleanup.policy": self.cleanup_policy}


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
        )
        if spec.partitions < 1:
            raise ValueError(f"topic {spec.name}: partitions must be >= 1")
        if spec.cleanup_policy not in {"delete", "compact", "compact,delete", "delete,compact"}:
            raise ValueError(f"topic {spec.name}: unknown cleanup_policy {spec.cleanup_policy!r}")
        specs.append(spec)
    return specs


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
            admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=5000)
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
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=30000)
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
    args = parser.parse_args(argv)
    if args.cmd == "wait":
        return wait(args.bootstrap, args.timeout, args.pid)
    return apply(args.bootstrap, args.catalogue)


if __name__ == "__main__":
    sys.exit(main())
