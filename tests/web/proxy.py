"""The web client's pieces for tests: the web build (scripts/build-web.sh), Debian's Chromium
(scripts/install-chromium.sh) and Envoy started the way ``make run`` starts it
(``deploy/envoy/render.py --exec``) on a free port."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

from tests import tempdirs
from tests.ports import free_port

ROOT = Path(__file__).resolve().parents[2]
RENDER = ROOT / "deploy" / "envoy" / "render.py"


def build_web() -> Path:
    """npm ci (when the lock changed) + buf generate + tsc + vite build; the dist directory."""
    result = subprocess.run(
        [str(ROOT / "scripts" / "build-web.sh")], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, f"scripts/build-web.sh failed:\n{result.stderr[-4000:]}"
    dist = Path(result.stdout.strip().splitlines()[-1])
    assert (dist / "index.html").is_file()
    return dist


def install_chromium() -> str:
    result = subprocess.run(
        [str(ROOT / "scripts" / "install-chromium.sh")], capture_output=True, text=True, timeout=900
    )
    assert result.returncode == 0, f"scripts/install-chromium.sh failed:\n{result.stderr[-4000:]}"
    return result.stdout.strip().splitlines()[-1]


def render(out: Path, gateway: str, static_dir: Path | None = None, listen: str = "127.0.0.1:8080") -> Path:
    command = [sys.executable, str(RENDER), "--listen", listen, "--gateway", gateway, "--out", str(out)]
    subprocess.run([*command, *(["--static-dir", str(static_dir)] if static_dir else [])], check=True, timeout=60)
    return out


def envoy_validate(config: Path) -> subprocess.CompletedProcess[str]:
    envoy = Path(sys.executable).with_name("envoy")
    return subprocess.run(
        [str(envoy), "--mode", "validate", "-c", str(config), "--disable-hot-restart"],
        capture_output=True,
        text=True,
        timeout=120,
    )


@dataclass
class EnvoyProcess:
    gateway: str
    static_dir: Path | None = None
    cors_origins: list[str] = field(default_factory=list)
    port: int = field(default_factory=free_port)
    workdir: Path = field(default_factory=lambda: tempdirs.make("cardroom-envoy-"))
    proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log_path(self) -> Path:
        return self.workdir / "envoy.log"

    def start(self, timeout: float = 60.0) -> EnvoyProcess:
        command = [
            sys.executable,
            str(RENDER),
            "--listen",
            f"127.0.0.1:{self.port}",
            "--gateway",
            self.gateway,
            "--out",
            str(self.workdir / "envoy.yaml"),
            "--exec",
            "--concurrency",
            "1",
            *(["--static-dir", str(self.static_dir)] if self.static_dir else []),
            *(arg for origin in self.cors_origins for arg in ("--cors-origin", origin)),
        ]
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(command, cwd=ROOT, stdout=log, stderr=log)
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"envoy exited with {self.proc.returncode}:\n{self.logs()[-3000:]}")
            try:
                with urllib.request.urlopen(f"{self.url}/healthz", timeout=1) as reply:
                    if reply.status == 200:
                        return self
            except (OSError, urllib.error.URLError):
                pass
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError(f"envoy not answering after {timeout}s:\n{self.logs()[-3000:]}")
            time.sleep(0.1)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def logs(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""
