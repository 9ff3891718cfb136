"""HTTP/2 keepalive: a peer that vanished without closing its connection (a node lost, a
partition, a NAT dropping the flow) is found within seconds instead of TCP's minutes.

Both sides ping a connection that carries calls and close it when a ping goes unanswered:
* servers (:func:`server_options`, every service's ``serve``): a player's Play stream whose client
  vanished ends, so the gateway tells the connection monitor and the disconnect rules run; a
  service's long watch from a peer that vanished is let go;
* clients (:func:`channel_options`, the services' one channel factory): a gateway's or tournament
  service's long dealer watch to a replica that vanished fails UNAVAILABLE, and the caller
  reconnects (to the table's new owner), instead of waiting on a dead socket.

The servers' ping policy lets the clients' pings in: a server answers a ping storm with GOAWAY
("too_many_pings"), so it accepts one every ``time_ms / 2``; clients ping only while they have calls.

Both sides also turn off gRPC's bandwidth-delay probe (:data:`NO_BDP_PROBE`): by default the receiver
of data sends a PING to measure the connection, the sender answers it, and TCP acknowledges both. That
sizes the flow-control window for bulk transfers; the card room's messages are small (a burst of table
events, an action), so for them it only costs: 5 TCP segments per 200-byte message with it, 2 without
(measured, docs/capacity.md), and every extra frame wakes both processes.
"""

from __future__ import annotations

from dataclasses import dataclass

Options = list[tuple[str, int]]

#: The server's floor between a client's pings while it sends no data.
MIN_RECV_PING_INTERVAL = "grpc.http2.min_ping_interval_without_data_ms"


@dataclass(frozen=True)
class Keepalive:
    """Ping a connection with calls after ``time_ms`` without frames; close it after ``timeout_ms``
    without the answer."""

    time_ms: int = 20_000
    timeout_ms: int = 10_000

    def __post_init__(self) -> None:
        if self.time_ms < 2 or self.timeout_ms < 1:
            raise ValueError(f"keepalive: time_ms ≥ 2 and timeout_ms ≥ 1, got {self.time_ms}, {self.timeout_ms}")


#: gRPC's bandwidth-delay probe off (see the module docstring): a stream's flow-control window stays at
#: its initial 64 KiB, more than any message of the card room.
NO_BDP_PROBE = ("grpc.http2.bdp_probe", 0)


#: The services' setting: a vanished peer is found in 20–30 s.
KEEPALIVE = Keepalive()


def channel_options(keepalive: Keepalive = KEEPALIVE) -> Options:
    """A channel's options: ping while calls are open, without a cap on pings between data frames; no
    bandwidth-delay probe."""
    return [
        ("grpc.keepalive_time_ms", keepalive.time_ms),
        ("grpc.keepalive_timeout_ms", keepalive.timeout_ms),
        ("grpc.http2.ping_timeout_ms", keepalive.timeout_ms),  # gRPC 1.85 times keepalive pings by this
        ("grpc.keepalive_permit_without_calls", 0),
        ("grpc.http2.max_pings_without_data", 0),
        NO_BDP_PROBE,
    ]


def server_options(keepalive: Keepalive = KEEPALIVE) -> Options:
    """A server's options: it pings its clients as channels do, and accepts their pings down to one
    every ``time_ms / 2`` (a client of the same setting is never sent GOAWAY for pinging); no
    bandwidth-delay probe."""
    return [
        ("grpc.keepalive_time_ms", keepalive.time_ms),
        ("grpc.keepalive_timeout_ms", keepalive.timeout_ms),
        ("grpc.http2.ping_timeout_ms", keepalive.timeout_ms),
        ("grpc.keepalive_permit_without_calls", 0),
        # gRPC's name (``GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS``); an unknown name is
        # ignored, and the default of 5 minutes sends a channel pinging every 20 s GOAWAY after 3 pings
        (MIN_RECV_PING_INTERVAL, keepalive.time_ms // 2),
        ("grpc.http2.max_ping_strikes", 2),
        NO_BDP_PROBE,
    ]
