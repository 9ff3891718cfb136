"""Helpers for the input-trust tests (issue 14, items 5 and 13): the wallet and the evaluator as
real processes with mutual TLS, raw calls that send arbitrary bytes, and the ledger state a rejected
request must leave as it was."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from contextlib import contextmanager

import grpc
import pytest

from cardroom.v1 import wallet_pb2 as w, wallet_pb2_grpc
from tests.services.pg import PostgresCluster
from tests.services.procs import ServiceProcess, secure_channel

INT64_MAX = 2**63 - 1
#: Statuses no request may ever get, whatever it holds.
NEVER = frozenset({grpc.StatusCode.UNKNOWN, grpc.StatusCode.INTERNAL, grpc.StatusCode.RESOURCE_EXHAUSTED})


def wallet_process(request: pytest.FixtureRequest, backend: str, **env: str) -> ServiceProcess:
    """A wallet with mutual TLS on ``backend`` ("sqlite" or "postgres"), Kafka off (the consumer and
    relay play no part in these tests; the outbox then only grows with real changes)."""
    settings = {"KAFKA_BOOTSTRAP": "none", **env}
    if backend == "postgres":
        cluster: PostgresCluster = request.getfixturevalue("postgres")
        settings["WALLET_DB_DSN"] = cluster.create_database(f"wallet_{uuid.uuid4().hex[:10]}")
    return ServiceProcess("wallet", settings, tls=True).start()


@contextmanager
def stubs(proc: ServiceProcess) -> Iterator[tuple[wallet_pb2_grpc.WalletStub, wallet_pb2_grpc.WalletStub]]:
    """The wallet as the operator's tooling (cashier, audit) and as the dealer (escrow transfers)."""
    with secure_channel(proc.address, "operator") as operator, secure_channel(proc.address, "dealer") as dealer:
        yield wallet_pb2_grpc.WalletStub(operator), wallet_pb2_grpc.WalletStub(dealer)


def summary(stub: wallet_pb2_grpc.WalletStub) -> w.LedgerSummary:
    return stub.GetLedgerSummary(w.GetLedgerSummaryRequest(), timeout=10)


def assert_sound(stub: wallet_pb2_grpc.WalletStub) -> None:
    s = summary(stub)
    assert all(t.sum == 0 for t in s.totals), s
    assert s.negative_accounts == 0 and s.mismatched_accounts == 0, s


def failure(call, request, timeout: float = 30) -> grpc.RpcError:
    with pytest.raises(grpc.RpcError) as caught:
        call(request, timeout=timeout)
    return caught.value


def raw_call(channel: grpc.Channel, method: str, body: bytes, timeout: float = 30) -> grpc.StatusCode:
    """Send ``body`` as the request of ``/method`` byte for byte; the status code of the answer."""
    call = channel.unary_unary(method, request_serializer=None, response_deserializer=None)
    try:
        call(body, timeout=timeout)
    except grpc.RpcError as err:
        return err.code()
    return grpc.StatusCode.OK


def no_tracebacks(proc: ServiceProcess) -> list[dict]:
    """The ERROR records and tracebacks of ``proc``'s log (none expected)."""
    return [r for r in proc.log_records() if r.get("level") == "ERROR" or "exception" in r]
