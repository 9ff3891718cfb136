"""The caller table (cardroom.runtime.trust.GRANTS) against the code: every call a service's source
makes to another service is granted to that service's identity (or production would refuse it), and
the table names only real services, methods and identities."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cardroom.runtime.pki import IDENTITIES
from cardroom.runtime.trust import ANY, GRANTS, OPEN_SERVICES, PUBLIC_SERVICES, can_call
from cardroom.v1 import (
    connection_monitor_pb2,
    dealer_pb2,
    evaluator_pb2,
    tournament_pb2,
    tournament_tables_pb2,
    wallet_pb2,
)

ROOT = Path(__file__).resolve().parents[2]
INTERNAL = {
    s.full_name: s
    for module in (wallet_pb2, dealer_pb2, evaluator_pb2, connection_monitor_pb2, tournament_pb2, tournament_tables_pb2)
    for s in module.DESCRIPTOR.services_by_name.values()
}
#: Which internal services each caller's code holds a stub of (its *_ADDR settings).
PEERS = {
    "gateway": ("cardroom.v1.Dealer", "cardroom.v1.Wallet", "cardroom.v1.ConnectionMonitor", "cardroom.v1.Tournament"),
    "dealer": ("cardroom.v1.Wallet", "cardroom.v1.Evaluator", "cardroom.v1.ConnectionMonitor"),
}


def test_the_table_names_real_services_methods_and_identities() -> None:
    for grant in GRANTS:
        assert grant.caller in IDENTITIES, grant
        assert grant.service in INTERNAL, grant
        methods = {m.name for m in INTERNAL[grant.service].methods}
        assert set(grant.methods) <= methods | {ANY}, grant
    assert not PUBLIC_SERVICES & set(INTERNAL) and not OPEN_SERVICES & set(INTERNAL)


@pytest.mark.parametrize("caller", sorted(PEERS))
def test_every_call_in_a_services_code_is_granted(caller: str) -> None:
    source = "\n".join(p.read_text() for p in (ROOT / "services" / caller).glob("*.py"))
    made = set()
    for service in PEERS[caller]:
        for method in INTERNAL[service].methods:
            if re.search(rf"\.{method.name}\(", source):  # a call, not a message type (w.Transfer)
                made.add(f"/{service}/{method.name}")
    assert made, f"no call found in services/{caller}: the pattern no longer matches the code"
    refused = sorted(m for m in made if not can_call(caller, m))
    assert not refused, f"{caller} calls {refused}, which the trust table refuses"


def test_no_identity_may_call_what_the_architecture_does_not_name() -> None:
    # The evaluator and the connection monitor call nobody; nobody but the operator closes a table;
    # only the operator deposits besides the gateway's play-money grant, and only the operator and the
    # gateway's cashier (after the operator's approval) withdraw.
    for identity in ("evaluator", "connection_monitor"):
        assert not [g for g in GRANTS if g.caller == identity]
    assert not can_call(None, "/grpc.health.v1.Health/Check")  # no certificate: nothing at all
    assert {i for i in IDENTITIES if can_call(i, "/cardroom.v1.Dealer/CloseTable")} == {"operator"}
    assert {i for i in IDENTITIES if can_call(i, "/cardroom.v1.Wallet/Withdraw")} == {"operator", "gateway"}
    assert {i for i in IDENTITIES if can_call(i, "/cardroom.v1.Dealer/Act")} == {"gateway"}
    # a player's own hands (his hole cards): only through the gateway, which authenticates him
    assert {i for i in IDENTITIES if can_call(i, "/cardroom.v1.Dealer/PlayerHands")} == {"gateway"}
    assert {i for i in IDENTITIES if can_call(i, "/cardroom.v1.Wallet/Transfer")} == {"dealer", "tournament"}
    # paying an escrow's positions back after a recovery: the dealer, which knows who is still seated
    assert {i for i in IDENTITIES if can_call(i, "/cardroom.v1.Wallet/ReconcileEscrow")} == {"dealer"}
    # claiming a partition of the tables fences the replica that had it: the dealers only (docs/sharding.md)
    assert {i for i in IDENTITIES if can_call(i, "/cardroom.v1.Wallet/ClaimTables")} == {"dealer"}
    # Tournaments: the operator creates and cancels them; entries are the players', through the gateway.
    for method in ("CreateTournament", "CancelTournament"):
        assert {i for i in IDENTITIES if can_call(i, f"/cardroom.v1.Tournament/{method}")} == {"operator"}
    for method in ("Register", "Unregister", "Rebuy", "AddOn"):
        assert {i for i in IDENTITIES if can_call(i, f"/cardroom.v1.Tournament/{method}")} == {"gateway"}
    # A tournament's tables on the dealer: every command is the tournament service's, and only its.
    for method in tournament_tables_pb2.DESCRIPTOR.services_by_name["TournamentTables"].methods:
        full = f"/cardroom.v1.TournamentTables/{method.name}"
        assert {i for i in IDENTITIES if can_call(i, full)} == {"tournament"}, full


def test_only_the_gateway_beats_for_the_players_of_its_streams() -> None:
    # a beat keeps every player it lists connected (no disconnect protection used up): only the
    # gateway, which authenticated those players, may send one; the operator only reads
    beats = "/cardroom.v1.ConnectionMonitor/GatewayHeartbeats"
    assert {i for i in IDENTITIES if can_call(i, beats)} == {"gateway"}


def test_the_gateway_may_not_read_a_connection_record() -> None:
    # the connection monitor's record of a player holds his peer address; the gateway never asks for
    # one (it only beats), so it is not granted: the dealer and the operator read them
    assert {i for i in IDENTITIES if can_call(i, "/cardroom.v1.ConnectionMonitor/GetConnection")} == {
        "dealer",
        "operator",
    }
