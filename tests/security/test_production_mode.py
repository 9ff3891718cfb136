"""Issue 14: "docker-compose publishes these ports on the host with `GATEWAY_SECRET: change-me`" — in
production mode (CARDROOM_MODE=production, as compose runs) the real gateway process refuses to start
without a real secret or without its certificate, and starts with both."""

from __future__ import annotations

import secrets

import pytest

from cardroom.runtime.production import production_problems
from tests.services.procs import ServiceProcess

PRODUCTION = {
    "CARDROOM_MODE": "production",
    "DEALER_ADDR": "127.0.0.1:1",
    "WALLET_ADDR": "127.0.0.1:1",
    "CONNECTION_MONITOR_ADDR": "",
}


@pytest.mark.parametrize("secret", ["", "change-me", "short-but-not-a-placeholder"])
def test_gateway_refuses_to_start_without_a_real_secret(secret: str) -> None:
    proc = ServiceProcess("gateway", {**PRODUCTION, "GATEWAY_SECRET": secret}, tls=True)
    with pytest.raises(RuntimeError, match="exited") as err:
        proc.start(timeout=30)
    assert "refusing to start in production mode" in str(err.value)
    assert "GATEWAY_SECRET" in str(err.value)
    assert proc.proc is not None and proc.proc.returncode != 0


def test_a_service_refuses_to_start_without_its_certificate() -> None:
    proc = ServiceProcess("gateway", {**PRODUCTION, "GATEWAY_SECRET": secrets.token_hex(32), "TLS_DIR": ""})
    with pytest.raises(RuntimeError, match="exited") as err:
        proc.start(timeout=30)
    assert "TLS_DIR is not set" in str(err.value)


def test_gateway_starts_with_a_real_secret_and_its_certificate() -> None:
    proc = ServiceProcess("gateway", {**PRODUCTION, "GATEWAY_SECRET": secrets.token_hex(32)}, tls=True).start()
    try:
        assert proc.proc is not None and proc.proc.poll() is None
    finally:
        assert proc.stop() == 0


def test_each_missing_piece_is_named() -> None:
    assert production_problems("gateway", {}) == [
        "TLS_DIR is not set (services talk to each other with mutual TLS only)",
        "GATEWAY_SECRET is not set",
    ]
    assert production_problems("wallet", {"TLS_DIR": "/x"}) == []
