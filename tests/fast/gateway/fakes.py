"""In-memory fakes of the gateway's backend stubs (dealer, wallet, connection monitor, tournament service), for the
fast tier: same call shapes as the generated ``grpc.aio`` stubs, scripted answers and failures,
every request recorded. Failures are real ``grpc.aio.AioRpcError`` values, with rich details
when built from a :class:`ServiceError`."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import grpc

from cardroom.runtime.errors import ServiceError
from cardroom.v1 import connection_monitor_pb2 as cm, dealer_pb2 as d, wallet_pb2 as w
from gateway.clients import Backends


def rpc_error(code: grpc.StatusCode, details: str = "", error: ServiceError | None = None) -> grpc.aio.AioRpcError:
    """A failed call as the stubs raise it; ``error`` adds its status details to the trailers."""
    trailers = grpc.aio.Metadata()
    if error is not None:
        status = error.to_status()
        code, details = status.code, status.details
        for key, value in status.trailing_metadata:
            trailers.add(key, value)
    return grpc.aio.AioRpcError(code, grpc.aio.Metadata(), trailers, details)


Answer = Any  # a reply message, an exception to raise, or a callable(request) -> either


def _answer(answer: Answer, request: Any) -> Any:
    if callable(answer) and not isinstance(answer, BaseException):
        answer = answer(request)
    if isinstance(answer, BaseException):
        raise answer
    return answer


@dataclass
class ScriptedStub:
    """Unary calls of any method: ``answers[method]`` is a list of answers used in turn (the last one
    repeats); every call is recorded in ``calls``; a method without answers is UNIMPLEMENTED."""

    answers: dict[str, list[Answer]] = field(default_factory=dict)
    calls: list[tuple[str, Any]] = field(default_factory=list)
    name = "stub"

    async def _unary(self, method: str, request: Any, **_: Any) -> Any:
        self.calls.append((method, request))
        queue = self.answers.get(method)
        if not queue:
            raise rpc_error(grpc.StatusCode.UNIMPLEMENTED, f"fake {self.name}: no answer for {method}")
        return _answer(queue.pop(0) if len(queue) > 1 else queue[0], request)

    def __getattr__(self, method: str) -> Callable[..., Any]:
        if method[:1].isupper():
            return lambda request, **kw: self._unary(method, request, **kw)
        raise AttributeError(method)


@dataclass
class FakeTournament(ScriptedStub):
    """The tournament service's unary calls (ListTournaments, Register, ...), scripted."""

    name = "tournament"


@dataclass
class FakeDealer(ScriptedStub):
    """The dealer's unary calls, scripted; Watch streams from ``watches``."""

    #: Watch scripts, used in turn: each an exception (the call fails) or a list of events, bursts
    #: (lists of events: one WatchBursts message) and exceptions (yielded, or raised mid-stream); a
    #: script ending without table_closed then waits. WatchBursts sends each lone event as a burst of one.
    watches: list[Any] = field(default_factory=list)
    watch_requests: list[d.WatchRequest] = field(default_factory=list)
    #: False: a dealer of the version before WatchBursts (it answers UNIMPLEMENTED).
    bursts: bool = True
    #: The stream method of each Watch call, in turn ("Watch" or "WatchBursts").
    watch_methods: list[str] = field(default_factory=list)
    name = "dealer"

    def _script(self, method: str, request: d.WatchRequest) -> Any:
        self.watch_methods.append(method)
        self.watch_requests.append(request)
        return self.watches.pop(0) if len(self.watches) > 1 else (self.watches[0] if self.watches else [])

    def Watch(self, request: d.WatchRequest, timeout: float | None = None) -> AsyncIterator[d.TableEvent]:
        script = self._script("Watch", request)

        async def stream() -> AsyncIterator[d.TableEvent]:
            async for burst in _played(script):
                for event in burst:
                    yield event

        return stream()

    def WatchTableFeed(self, requests: Any, timeout: float | None = None) -> AsyncIterator[d.TableFeed]:
        """A dealer of the version before the feed: every session watches alone (the scripts above)."""

        async def unimplemented() -> AsyncIterator[d.TableFeed]:
            raise rpc_error(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")
            yield d.TableFeed()  # pragma: no cover - makes this a generator

        return unimplemented()

    def WatchBursts(self, request: d.WatchRequest, timeout: float | None = None) -> AsyncIterator[d.TableEventBatch]:
        if not self.bursts:
            self.watch_methods.append("WatchBursts")

            async def unimplemented() -> AsyncIterator[d.TableEventBatch]:
                raise rpc_error(grpc.StatusCode.UNIMPLEMENTED, "Method not found!")
                yield d.TableEventBatch()  # pragma: no cover - makes this a generator

            return unimplemented()
        script = self._script("WatchBursts", request)

        async def stream() -> AsyncIterator[d.TableEventBatch]:
            async for burst in _played(script):
                yield d.TableEventBatch(events=burst)

        return stream()


async def _played(script: Any) -> AsyncIterator[list[d.TableEvent]]:
    """A Watch script as bursts (see FakeDealer.watches), then waiting like an open table."""
    if isinstance(script, BaseException):
        raise script
    for item in script:
        if isinstance(item, BaseException):
            raise item
        yield list(item) if isinstance(item, list) else [item]
    await asyncio.Event().wait()  # an open table: no more events for now


@dataclass
class FakeWallet:
    """Accounts by id; OpenAccount, Deposit and GetBalance as the wallet answers them."""

    balances: dict[str, int] = field(default_factory=dict)
    fail: dict[str, BaseException] = field(default_factory=dict)
    calls: list[tuple[str, Any]] = field(default_factory=list)

    def _check(self, method: str, request: Any) -> None:
        self.calls.append((method, request))
        if method in self.fail:
            raise self.fail[method]

    async def OpenAccount(self, request: w.OpenAccountRequest, **_: Any) -> w.OpenAccountResponse:
        self._check("OpenAccount", request)
        slug = {
            w.ACCOUNT_KIND_PLAYER_CASH: ("player_cash", "cash"),
            w.ACCOUNT_KIND_PLAYER_PLAY: ("player_play", "play"),
        }
        kind, currency = slug[request.kind]
        account_id = f"{kind}:{request.owner}:{currency}"
        created = account_id not in self.balances
        self.balances.setdefault(account_id, 0)
        return w.OpenAccountResponse(
            account=w.Account(account_id=account_id, balance=self.balances[account_id]), created=created
        )

    async def Deposit(self, request: w.DepositRequest, **_: Any) -> w.TransferResponse:
        self._check("Deposit", request)
        if request.idempotency_key and request.idempotency_key in self.keys:
            return w.TransferResponse(transfer=self.keys[request.idempotency_key], replayed=True)
        self.balances[request.account_id] += request.amount
        return w.TransferResponse(
            transfer=self._record(
                request.idempotency_key or f"k{len(self.transfers)}",
                to_account=request.account_id,
                from_account="external:house:play",
                amount=request.amount,
                kind=w.TRANSFER_KIND_DEPOSIT,
                reference=request.reference,
                to_balance_after=self.balances[request.account_id],
            )
        )

    transfers: list[w.Transfer] = field(default_factory=list)
    keys: dict[str, w.Transfer] = field(default_factory=dict)

    def _record(self, key: str, **kw: Any) -> w.Transfer:
        if key in self.keys:
            return self.keys[key]
        t = w.Transfer(transfer_id=len(self.transfers) + 1, idempotency_key=key, **kw)
        t.created_at.GetCurrentTime()
        self.transfers.append(t)
        self.keys[key] = t
        return t

    async def Withdraw(self, request: w.WithdrawRequest, **_: Any) -> w.TransferResponse:
        self._check("Withdraw", request)
        if request.idempotency_key in self.keys:
            return w.TransferResponse(transfer=self.keys[request.idempotency_key], replayed=True)
        if self.balances.get(request.account_id, 0) < request.amount:
            raise rpc_error(grpc.StatusCode.FAILED_PRECONDITION, "insufficient funds")
        self.balances[request.account_id] -= request.amount
        return w.TransferResponse(
            transfer=self._record(
                request.idempotency_key,
                from_account=request.account_id,
                to_account="external:house:cash",
                amount=request.amount,
                kind=w.TRANSFER_KIND_WITHDRAWAL,
                reference=request.reference,
                from_balance_after=self.balances[request.account_id],
            )
        )

    async def ListTransfers(self, request: w.ListTransfersRequest, **_: Any) -> w.ListTransfersResponse:
        self._check("ListTransfers", request)
        return w.ListTransfersResponse(
            transfers=[t for t in self.transfers if request.account_id in (t.from_account, t.to_account)]
        )

    async def GetBalance(self, request: w.GetBalanceRequest, **_: Any) -> w.Account:
        self._check("GetBalance", request)
        if request.account_id not in self.balances:
            raise rpc_error(grpc.StatusCode.NOT_FOUND, f"account_id: no account {request.account_id!r}")
        return w.Account(account_id=request.account_id, balance=self.balances[request.account_id])


@dataclass
class FakeMonitor:
    """The gateway's one heartbeat stream (GatewayHeartbeats): each call takes its beats, recorded as
    they come (``batches``, and every entry in ``beats``). While ``down`` (the monitor restarting) a
    new call fails at once and an open one at its next beat, both UNAVAILABLE; ``fail_with``: what
    the next calls raise at once, in turn."""

    down: bool = False
    fail_with: list[BaseException] = field(default_factory=list)
    streams: int = 0
    batches: list[cm.PresenceBeat] = field(default_factory=list)
    beats: list[cm.Heartbeat] = field(default_factory=list)

    def _check(self) -> None:
        if self.down:
            raise rpc_error(grpc.StatusCode.UNAVAILABLE, "fake monitor down")

    async def GatewayHeartbeats(self, beats: AsyncIterator[cm.PresenceBeat], **_: Any) -> cm.HeartbeatsSummary:
        self.streams += 1
        if self.fail_with:
            raise self.fail_with.pop(0)
        self._check()
        received = 0
        async for beat in beats:
            self._check()
            received += 1
            self.batches.append(beat)
            self.beats.extend(beat.alive)
        return cm.HeartbeatsSummary(received=received)

    def listed(self, since: int = 0) -> list[set[str]]:
        """The players of each beat from batch number ``since`` on."""
        return [{entry.player_id for entry in beat.alive} for beat in self.batches[since:]]


def backends(
    dealer: FakeDealer | None = None,
    wallet: FakeWallet | None = None,
    monitor: FakeMonitor | None = None,
    tournament: FakeTournament | None = None,
) -> Backends:
    """``tournament`` None: tournaments off, as a gateway without TOURNAMENT_ADDR."""
    return Backends(
        dealer=dealer or FakeDealer(),
        wallet=wallet or FakeWallet(),
        monitor=monitor,  # type: ignore[arg-type]
        channels=[],
        tournament=tournament,  # type: ignore[arg-type]
    )
