"""Who may call whom: mutual TLS between services and the one per-method caller table.

A service whose ``TLS_DIR`` is set (``ca.crt``, ``tls.crt``, ``tls.key``; see
:mod:`cardroom.runtime.pki`) serves its internal gRPC services on a TLS port that *requires* a
client certificate from the project CA, and its outbound channels present its own certificate. The
caller's identity is the common name of that certificate. :data:`GRANTS` is the one table of which
identity may call which method; :class:`CallerInterceptor` enforces it: no certificate (or a
plaintext server without TLS) → UNAUTHENTICATED, a method the caller is not granted →
PERMISSION_DENIED. Health and reflection stay open to any certificate of the CA (probes use the
service's own). The gateway's public services (players, the operator API with its token) are not in
the table: a server that serves only public services keeps a plain port.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import grpc

from cardroom.runtime import errors
from cardroom.runtime.handlers import checked_first
from cardroom.runtime.pki import identity_of

WALLET, DEALER = "cardroom.v1.Wallet", "cardroom.v1.Dealer"
EVALUATOR, MONITOR = "cardroom.v1.Evaluator", "cardroom.v1.ConnectionMonitor"
TOURNAMENT = "cardroom.v1.Tournament"
TOURNAMENT_TABLES = "cardroom.v1.TournamentTables"  # served by the dealer
#: Client-facing services (players and the operator API authenticate with tokens, in the gateway).
PUBLIC_SERVICES = frozenset({"cardroom.v1.Gateway", "cardroom.v1.GatewayOperator"})
#: Open to any certificate of the project CA (health probes, grpcurl).
OPEN_SERVICES = frozenset(
    {"grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection", "grpc.reflection.v1.ServerReflection"}
)
ANY = "*"

TABLE_COMMANDS = (
    "SitDown",
    "AddChips",
    "SitOut",
    "ComeBack",
    "StandUp",
    "Act",
    "Watch",
    "WatchBursts",
    "WatchTableFeed",
)


@dataclass(frozen=True)
class Grant:
    """``caller`` may call ``methods`` (or every method: ``ANY``) of the gRPC service ``service``."""

    caller: str
    service: str
    methods: tuple[str, ...]


#: THE table: the architecture's calls, per method. Anything not here is PERMISSION_DENIED.
GRANTS: tuple[Grant, ...] = (
    # The gateway: players' table commands and lobby, play-money grants and the operator API's
    # CreateTable / FundPlayer; heartbeats for the connection monitor: GatewayHeartbeats (one stream
    # per gateway process, the gateway's only) and the per-player Heartbeats the gateway used before
    # it (kept for gateways of that version while a rolling upgrade replaces them).
    # PlayerHands: a player's own recent hands (the gateway passes the id of the caller's token).
    Grant("gateway", DEALER, ("CreateTable", "ListTables", "GetTable", *TABLE_COMMANDS, "PlayerHands")),
    # the play-money grant and the cashier: the player's own account (withdrawals of real money only
    # once the operator approved them through GatewayOperator), its history
    Grant("gateway", WALLET, ("OpenAccount", "Deposit", "Withdraw", "GetBalance", "ListTransfers")),
    Grant("gateway", MONITOR, ("GatewayHeartbeats", "Heartbeats")),
    # The dealer: escrow transfers (buy-in, cash-out, settlement), showdown audits, all-in allowance;
    # after its recovery, paying back the escrow positions of players it no longer seats; a replica's
    # claim of a partition of the tables, which fences the replica that had it (docs/sharding.md).
    Grant("dealer", WALLET, ("OpenAccount", "Transfer", "GetBalance", "ReconcileEscrow", "ClaimTables")),
    Grant("dealer", EVALUATOR, ("Evaluate", "Showdown")),
    Grant("dealer", MONITOR, ("GetConnection", "GetAllInAllowance", "ConsumeAllIn")),
    # The tournament service (being built): entry fees and prizes.
    Grant("tournament", WALLET, ("OpenAccount", "Transfer", "GetBalance")),
    # ... and its tables on the dealer (tournament_tables.proto): only the tournament service runs them.
    Grant(
        "tournament",
        TOURNAMENT_TABLES,
        (
            "OpenTournamentTable",
            "SetTournamentLevel",
            "SeatTournamentPlayer",
            "RemoveTournamentPlayer",
            "MoveTournamentPlayer",
            "AddTournamentChips",
            "PauseTournamentTable",
            "ResumeTournamentTable",
            "CloseTournamentTable",
            "GetTournamentTable",
            "DealTournamentHand",
        ),
    ),
    # Its lobby for players, through the gateway (Gateway/TournamentLobby ... MyTournamentStatus, for the
    # token's own player): entries, a player's own status, the lobby pages.
    Grant(
        "gateway",
        TOURNAMENT,
        ("ListTournaments", "GetTournament", "Register", "Unregister", "Rebuy", "AddOn", "GetPlayerStatus"),
    ),
    # The operator's tooling (certificate ``operator``): cashier and audit on the wallet, table
    # administration on the dealer, support on the connection monitor. It never plays (no seat
    # commands) and never watches as a player (hole cards reach players only through the gateway,
    # which authenticates them); it moves chips only by Deposit / Withdraw.
    Grant(
        "operator", WALLET, ("OpenAccount", "Deposit", "Withdraw", "GetBalance", "ListTransfers", "GetLedgerSummary")
    ),
    Grant("operator", DEALER, ("CreateTable", "CloseTable", "ListTables", "GetTable")),
    Grant("operator", MONITOR, ("GetConnection", "ListConnections", "GetAllInAllowance", "ResetAllInAllowance")),
    Grant("operator", EVALUATOR, (ANY,)),
    # Tournament administration: create and cancel (the operator token, when set, on top), the lobby.
    Grant(
        "operator",
        TOURNAMENT,
        (
            "CreateTournament",
            "CancelTournament",
            "ListTournaments",
            "GetTournament",
            "GetPlayerStatus",
            "WatchTournament",
        ),
    ),
)


def callers_of(service: str, method: str, grants: Iterable[Grant] = GRANTS) -> frozenset[str]:
    """The identities that may call ``/service/method``."""
    return frozenset(g.caller for g in grants if g.service == service and (method in g.methods or ANY in g.methods))


def can_call(caller: str | None, full_method: str, grants: Iterable[Grant] = GRANTS) -> bool:
    """True when ``caller`` (None: no certificate) may call ``full_method`` (``/pkg.Service/Method``)."""
    service, _, method = full_method.lstrip("/").rpartition("/")
    if caller is None:
        return False
    if service in OPEN_SERVICES:
        return True
    return caller in callers_of(service, method, grants)


# --- credentials -----------------------------------------------------------------------------


@dataclass(frozen=True)
class TlsFiles:
    """One identity's certificate, key and the project CA (PEM)."""

    ca: bytes
    cert: bytes
    key: bytes

    @property
    def identity(self) -> str:
        return identity_of(self.cert)

    @classmethod
    def load(cls, directory: Path | str) -> TlsFiles:
        path = Path(directory)
        try:
            return cls((path / "ca.crt").read_bytes(), (path / "tls.crt").read_bytes(), (path / "tls.key").read_bytes())
        except OSError as exc:
            raise SystemExit(f"TLS_DIR={directory}: {exc}") from None


def tls_from_env() -> TlsFiles | None:
    """The service's own certificate from ``$TLS_DIR`` (None when unset or empty: plaintext)."""
    directory = os.environ.get("TLS_DIR", "").strip()
    return TlsFiles.load(directory) if directory else None


def server_credentials(files: TlsFiles) -> grpc.ServerCredentials:
    """A TLS port that requires (and verifies against the CA) a client certificate."""
    return grpc.ssl_server_credentials([(files.key, files.cert)], root_certificates=files.ca, require_client_auth=True)


def channel_credentials(files: TlsFiles) -> grpc.ChannelCredentials:
    """Verify the server against the project CA and present this identity's certificate."""
    return grpc.ssl_channel_credentials(root_certificates=files.ca, private_key=files.key, certificate_chain=files.cert)


def is_internal(service_names: Iterable[str]) -> bool:
    """True when any of the services is internal (not a public gateway service)."""
    return any(name not in PUBLIC_SERVICES for name in service_names)


# --- enforcement -----------------------------------------------------------------------------


def peer_identity(context: grpc.aio.ServicerContext) -> str | None:
    """The verified client certificate's common name, or None (no TLS, no certificate)."""
    auth = context.auth_context()
    names = auth.get("x509_common_name") or []
    if auth.get("transport_security_type", [b""])[0] != b"ssl" or not names:
        return None
    return bytes(names[0]).decode()


async def refuse(context: grpc.aio.ServicerContext, full_method: str) -> None:
    """Abort unless the peer may call ``full_method``."""
    caller = peer_identity(context)
    if caller is None:
        await errors.abort(
            context,
            errors.unauthenticated(
                f"{full_method} needs a client certificate of the Cardroom CA", "NO_CLIENT_CERTIFICATE"
            ),
        )
    if not can_call(caller, full_method):
        await errors.abort(context, errors.denied(f"{caller} may not call {full_method}", "CALLER_NOT_ALLOWED"))


class CallerInterceptor(grpc.aio.ServerInterceptor):
    """Enforce :data:`GRANTS` on every call, before the servicer runs."""

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        handler = await continuation(handler_call_details)
        if handler is None:
            return handler
        method = handler_call_details.method
        return checked_first(handler, lambda context: refuse(context, method))
