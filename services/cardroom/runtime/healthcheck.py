"""``python -m cardroom.runtime.healthcheck``: exit 0 when this container's service is SERVING.

Used as the Docker / Kubernetes exec health probe. Reads ``GRPC_PORT`` (and optionally
``HEALTH_SERVICE``, default "" = the whole server, ready) from the environment, or the service
name as its argument (``liveness``: the process serves, ready or not); with ``TLS_DIR`` set
the probe presents the service's own certificate (an internal service's port is mutual TLS) and
falls back to plaintext (the gateway's public port).
"""

from __future__ import annotations

import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from cardroom.runtime.trust import TlsFiles, channel_credentials, tls_from_env


def sync_channel(address: str, tls: TlsFiles | None) -> grpc.Channel:
    """A blocking channel: mutual TLS with ``tls``, else plaintext."""
    if tls is None:
        return grpc.insecure_channel(address)
    return grpc.secure_channel(address, channel_credentials(tls))


def check(address: str, service: str = "", timeout: float = 2.0, tls: TlsFiles | None = None) -> bool:
    """True when the server at ``address`` reports ``service`` as SERVING."""
    try:
        with sync_channel(address, tls) as channel:
            reply = health_pb2_grpc.HealthStub(channel).Check(
                health_pb2.HealthCheckRequest(service=service), timeout=timeout
            )
    except grpc.RpcError:
        return False
    return reply.status == health_pb2.HealthCheckResponse.SERVING


def main() -> int:
    port = os.environ.get("GRPC_PORT", "")
    if not port.isdigit():
        print("healthcheck: GRPC_PORT is not set", file=sys.stderr)
        return 2
    # An argument names the service to check instead (``liveness`` for startup/liveness probes).
    service = sys.argv[1] if len(sys.argv) > 1 else os.environ.get("HEALTH_SERVICE", "")
    address, tls = f"127.0.0.1:{port}", tls_from_env()
    # The gateway has a certificate (for its own calls) but a plain public port: try both.
    serving = (tls is not None and check(address, service, tls=tls)) or check(address, service)
    return 0 if serving else 1


if __name__ == "__main__":
    sys.exit(main())
