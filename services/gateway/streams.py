"""How the gateway keeps its long-lived dealer streams (a session's Watch, a table's feed): their
timeout, which failures are the dealer restarting (opened again), and for how long."""

from __future__ import annotations

import grpc

#: Timeout for long-lived streams: the deadline interceptor only fills in a missing one.
STREAM_TIMEOUT = 365 * 24 * 3600.0
#: How long a broken dealer stream is retried (the dealer restarting) before the sessions give up.
WATCH_RETRY_SECONDS = 60.0
#: A dealer stream failing with these is the dealer restarting (or the network): opened again.
RETRIED = (
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
    grpc.StatusCode.CANCELLED,
)
