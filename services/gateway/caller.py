"""Who is calling: the connection and the client address a call's rate limits are keyed by.

A client connected directly is its gRPC peer (``ipv4:1.2.3.4:5678``) and that peer's address. Behind
a proxy the gateway trusts (``GATEWAY_TRUSTED_PROXIES``: the web edge's Envoy), every browser comes
on the proxy's connections from the proxy's address; its own address is then the nearest address in
``x-forwarded-for`` that is not a trusted proxy (Envoy, with ``use_remote_address``, appends the
address it accepted the browser's connection from), and its connection bucket is that of (proxy
connection, client address). Anyone else's ``x-forwarded-for`` is ignored: a client that is not a
trusted proxy cannot choose the address it is limited by.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from gateway.ratelimit import address_of

Network = ipaddress.IPv4Network | ipaddress.IPv6Network
FORWARDED_FOR = "x-forwarded-for"


@dataclass(frozen=True, slots=True)
class Caller:
    connection: str
    """The per-connection bucket's key."""
    address: str
    """The client address (``ipv4:1.2.3.4`` / ``ipv6:[::1]``): the per-address, password-attempt,
    sign-up and sign-up-grant buckets' key."""


def parse_networks(text: str, variable: str = "GATEWAY_TRUSTED_PROXIES") -> tuple[Network, ...]:
    """``"127.0.0.1, 10.0.0.0/8"`` -> networks; ValueError naming the bad entry."""
    networks = []
    for entry in (e.strip() for e in text.split(",")):
        if not entry:
            continue
        try:
            networks.append(ipaddress.ip_network(entry, strict=False))
        except ValueError:
            raise ValueError(f"{variable}: {entry!r} is not an IP address or network (e.g. 10.0.0.0/8)") from None
    return tuple(networks)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    text = text.strip()
    if text.startswith("[") and "]" in text:  # [v6] or [v6]:port
        text = text[1 : text.index("]")]
    try:
        return ipaddress.ip_address(text)
    except ValueError:
        return None


def _peer_ip(peer: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    kind, _, host = address_of(peer).partition(":")
    return _ip(host) if kind in ("ipv4", "ipv6") else None


def _address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> str:
    return f"ipv4:{ip}" if ip.version == 4 else f"ipv6:[{ip}]"


def caller_of(peer: str, metadata: Iterable[tuple[str, str | bytes]], trusted: Sequence[Network]) -> Caller:
    """The :class:`Caller` of a call from ``peer`` with ``metadata`` (see the module docstring)."""
    direct = Caller(peer, address_of(peer))
    ip = _peer_ip(peer)
    if ip is None or not any(ip in network for network in trusted):
        return direct
    hops = [
        hop.strip()
        for key, value in metadata
        if key.lower() == FORWARDED_FOR
        for hop in (value.decode("latin-1") if isinstance(value, bytes) else value).split(",")
    ]
    for hop in reversed(hops):  # the nearest first: Envoy appended the address it saw
        hop_ip = _ip(hop)
        if hop_ip is None:
            break  # garbage from further away: the proxy's own view is all that can be trusted
        if not any(hop_ip in network for network in trusted):
            address = _address(hop_ip)
            return Caller(f"{peer}|{address}", address)
    return direct
