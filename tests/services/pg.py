"""A throwaway PostgreSQL cluster for tests: installs Debian's ``postgresql`` if missing,
runs ``initdb`` in a temporary directory and starts it on a free loopback port.

Run standalone: ``python -m tests.services.pg`` starts one, prints its DSN, and stops on Enter.
"""

from __future__ import annotations

import fcntl
import glob
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import psycopg

from tests.ports import free_port

#: Taken around every apt-get of the test harness and the project's install scripts.
APT_LOCK = "/tmp/cardroom-apt.lock"


def find_bindir() -> Path | None:
    """The directory holding initdb, pg_ctl and postgres, if PostgreSQL is installed."""
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(p.split("/")[-2]), reverse=True)
    for directory in candidates:
        if os.access(os.path.join(directory, "initdb"), os.X_OK):
            return Path(directory)
    initdb = shutil.which("initdb")
    return Path(os.path.realpath(initdb)).parent if initdb else None


def ensure_installed() -> Path:
    """Find PostgreSQL, installing Debian's package (as root) when it is missing."""
    bindir = find_bindir()
    if bindir is not None:
        return bindir
    if os.geteuid() != 0:
        raise RuntimeError("PostgreSQL is not installed and installing it needs root: apt-get install -y postgresql")
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    # One apt at a time on the machine (xdist workers, scripts/install-chromium.sh): a second one
    # fails on dpkg's lock instead of waiting.
    with open(APT_LOCK, "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if find_bindir() is None:  # another worker may have installed it meanwhile
            subprocess.run(["apt-get", "update"], check=True, env=env, stdout=subprocess.DEVNULL)
            subprocess.run(
                ["apt-get", "install", "-y", "--no-install-recommends", "postgresql"],
                check=True,
                env=env,
                stdout=subprocess.DEVNULL,
            )
    bindir = find_bindir()
    if bindir is None:
        raise RuntimeError("apt-get install postgresql did not provide initdb")
    return bindir


@dataclass
class PostgresCluster:
    """One running cluster; ``dsn(db)`` connects as the superuser ``cardroom`` without a password."""

    bindir: Path
    port: int = field(default_factory=free_port)
    user: str = "cardroom"
    datadir: Path = field(init=False)
    _run_as: list[str] = field(init=False, default_factory=list)
    _options: str = field(init=False, default="")

    def start(self) -> PostgresCluster:
        base = Path(tempfile.mkdtemp(prefix="cardroom-pg-"))
        self.datadir = base / "data"
        if os.geteuid() == 0:  # postgres refuses to run as root: use the package's system user
            owner = "postgres"
            try:
                pwd.getpwnam(owner)
            except KeyError:
                subprocess.run(["useradd", "--system", "--no-create-home", owner], check=True)
            shutil.chown(base, owner, owner)
            self._run_as = ["runuser", "-u", owner, "--"]
        self._cmd("initdb", "-D", str(self.datadir), "-U", self.user, "-A", "trust", "-E", "UTF8", "--no-sync")
        self._options = options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {base} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        self._cmd(
            "pg_ctl", "-D", str(self.datadir), "-o", options, "-l", str(base / "server.log"), "-w", "-t", "60", "start"
        )
        return self

    def restart(self) -> None:
        """Fast restart on the same port: every client connection is cut."""
        self._cmd("pg_ctl", "-D", str(self.datadir), "-m", "fast", "-w", "-t", "60", "-o", self._options, "restart")

    def _cmd(self, program: str, *args: str) -> None:
        subprocess.run(
            [*self._run_as, str(self.bindir / program), *args],
            check=True,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )

    def dsn(self, dbname: str = "postgres") -> str:
        return f"host=127.0.0.1 port={self.port} user={self.user} dbname={dbname}"

    def create_database(self, name: str) -> str:
        """Create (or recreate) database ``name`` and return its DSN."""
        with psycopg.connect(self.dsn(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.dsn(name)

    def stop(self) -> None:
        try:
            self._cmd("pg_ctl", "-D", str(self.datadir), "-m", "fast", "-w", "stop")
        finally:
            shutil.rmtree(self.datadir.parent, ignore_errors=True)


def start_cluster() -> PostgresCluster:
    return PostgresCluster(ensure_installed()).start()


if __name__ == "__main__":
    cluster = start_cluster()
    print(cluster.dsn(), flush=True)
    try:
        input("PostgreSQL running; press Enter to stop\n")
    finally:
        cluster.stop()
        time.sleep(0)
