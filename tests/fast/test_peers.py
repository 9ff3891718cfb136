"""Optional peers: an empty address turns the peer off (issue 10: the gateway fell back to the
default connection monitor address when CONNECTION_MONITOR_ADDR was empty)."""

from __future__ import annotations

import asyncio

import pytest

from cardroom.runtime.peers import OptionalPeer, optional_address


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, "127.0.0.1:20054"),
        ("", None),
        ("  ", None),
        ("off", None),
        ("OFF", None),
        ("none", None),
        ("monitor:20054", "monitor:20054"),
        (" monitor:1 ", "monitor:1"),
    ],
)
def test_optional_address(monkeypatch: pytest.MonkeyPatch, value: str | None, expected: str | None) -> None:
    if value is None:
        monkeypatch.delenv("PEER_ADDR", raising=False)
    else:
        monkeypatch.setenv("PEER_ADDR", value)
    assert optional_address("PEER_ADDR", "127.0.0.1:20054") == expected


def test_off_by_default_when_the_default_is_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PEER_ADDR", raising=False)
    assert optional_address("PEER_ADDR", "") is None


def test_gateway_config_turns_heartbeats_off(monkeypatch: pytest.MonkeyPatch) -> None:
    from gateway.config import GatewayConfig

    monkeypatch.setenv("CONNECTION_MONITOR_ADDR", "")
    monkeypatch.setenv("GATEWAY_SECRET", "s")
    assert GatewayConfig.from_env().monitor_addr is None


def test_an_off_peer_has_no_stub_or_channel() -> None:
    async def run() -> None:
        off = OptionalPeer.connect("monitor", None, lambda channel: channel)
        assert not off.enabled and off.channel is None and off.describe() == "off"
        await off.close()
        on = OptionalPeer.connect("monitor", "127.0.0.1:1", lambda channel: ("stub", channel))
        assert on.enabled and on.channel is not None and on.describe() == "127.0.0.1:1"
        await on.close()

    asyncio.run(run())


def test_health_answers_for_the_short_service_names() -> None:
    """Issue 13: gRPC health for `evaluator` as well as `cardroom.v1.Evaluator`."""
    from cardroom.runtime.server import health_names, short_name

    assert short_name("cardroom.v1.ConnectionMonitor") == "connection_monitor"
    assert short_name("cardroom.v1.GatewayOperator") == "gateway_operator"
    assert health_names("evaluator", ["cardroom.v1.Evaluator"]) == ["", "evaluator", "cardroom.v1.Evaluator"]
    assert health_names("gateway", ["cardroom.v1.Gateway", "cardroom.v1.GatewayOperator"]) == [
        "",
        "gateway",
        "cardroom.v1.Gateway",
        "cardroom.v1.GatewayOperator",
        "gateway_operator",
    ]
