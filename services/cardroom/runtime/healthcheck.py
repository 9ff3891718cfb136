"""``python -m cardroom.runtime.healthcheck``: exit 0 when this container's service is SERVING.

Used as the Docker / Kubernetes exec health probe. Reads ``GRPC_PORT`` (and optionally
``HEALTH_SERVICE``, default "" = the whole server) from the environment.
"""

from __future__ import annotations

import os
import sys

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc


def check(address: str, service: str = "", timeout: float = 2.0) -> bool:
    """True when the server at ``address`` reports ``service`` as SERVING."""
    try:
        with grpc.insecure_channel(address) as channel:
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
    return 0 if check(f"127.0.0.1:{port}", os.environ.get("HEALTH_SERVICE", "")) else 1


if __name__ == "__main__":
    sys.exit(main())
