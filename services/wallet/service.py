"""The Wallet gRPC servicer: validates requests, runs ledger operations in worker threads and
maps :class:`LedgerError` to the runtime's error model (a rejected request changes nothing).

ReconcileEscrow (issue 14 item 7, the dealer only, see ``cardroom.runtime.trust``): after its
recovery the dealer names each table escrow and the players it still has seated there; the wallet
pays back, as cash-outs, every position of a player not seated (:mod:`wallet.escrow`), once per
request id, and counts the escrow and the chips (``wallet_escrows_reconciled_total``,
``wallet_escrow_chips_returned_total``).

Fencing (docs/sharding.md, :mod:`wallet.fencing`): ClaimTables (the dealer only) stores a dealer
replica's claim of a partition of the tables; Transfer and ReconcileEscrow with a fence of epoch > 0
are refused (FAILED_PRECONDITION ``fenced: ...``, reason ``FENCED``, nothing moved) when a later claim
of the partition exists. Refusals are counted in ``wallet_fenced_total{kind}`` and logged."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import grpc

from cardroom.core import ids
from cardroom.runtime import errors
from cardroom.runtime.errors import ServiceError, rpc
from cardroom.v1 import wallet_pb2, wallet_pb2_grpc
from wallet import ledger, metrics
from wallet.escrow import HandSettlement, ReconcileRequest, escrow_of, reconcile_request
from wallet.fencing import Fence, claim_of, fence_of
from wallet.ledger import AK, TK, ErrorKind, LedgerError, TransferSpec, invalid
from wallet.rake import hand_settlement
from wallet.store import LedgerStore, StoreUnavailable, TransferRow
from wallet.store_api import Fenced, Reconciliation

log = logging.getLogger("wallet.service")
T = TypeVar("T")

_STATUS = {
    ErrorKind.INVALID: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorKind.NOT_FOUND: grpc.StatusCode.NOT_FOUND,
    ErrorKind.PRECONDITION: grpc.StatusCode.FAILED_PRECONDITION,
    ErrorKind.CONFLICT: grpc.StatusCode.ALREADY_EXISTS,
    ErrorKind.OUT_OF_RANGE: grpc.StatusCode.OUT_OF_RANGE,
}
#: A page token is a transfer id (a positive int64, at most 19 digits).
_PAGE_TOKEN = re.compile(r"[0-9]{1,18}")
DEFAULT_PAGE = 50
MAX_PAGE = 500


def parse_account(value: str, field: str) -> tuple[int, str, int]:
    """``(kind, owner, currency)`` of an account id checked by :mod:`cardroom.core.ids`, else INVALID_ARGUMENT."""
    parsed = ids.parse_account_id(value, field)  # InvalidId: INVALID_ARGUMENT through @rpc
    return ledger.SLUG_KIND[parsed.kind.value], parsed.owner, ledger.SLUG_CURRENCY[parsed.currency.value]


def check_open(kind: int, owner: str, currency: int) -> int:
    """The currency of the account an OpenAccount request would open, else a :class:`LedgerError`."""
    if kind not in ledger.KIND_SLUG:
        raise invalid(f"kind: unknown or unspecified account kind {kind}")
    if kind == AK.ACCOUNT_KIND_EXTERNAL:
        raise invalid("kind: external accounts are built in ('external:house:cash', 'external:house:play')")
    ids.verify_owner(ids.AccountKind(ledger.KIND_SLUG[kind]), owner)
    ledger.check_house_owner(kind, owner)
    return ledger.resolve_currency(kind, currency)


def service_error(err: LedgerError) -> ServiceError:
    """A ledger rejection in the runtime's error model (the field it names as a violation)."""
    code = _STATUS[err.kind]
    if code == grpc.StatusCode.INVALID_ARGUMENT:
        return errors.invalid(err.message)
    if isinstance(err, Fenced):  # the dealer tells a lost table from other refusals by the reason
        return errors.ServiceError(code, err.message, reason="FENCED", metadata=err.details)
    return errors.ServiceError(code, err.message)


def record_fenced(kind: str, err: Fenced, **context: str) -> None:
    """Count and log (WARNING) a call or settlement refused for a stale epoch (``kind``: one of
    ``metrics.FENCED_KINDS``; ``context``: more fields for the log line)."""
    metrics.FENCED.labels(kind).inc()
    log.warning("stale epoch refused", extra={"kind": kind, "reason": err.message, **err.details, **context})


def record(transfer: TransferRow, replayed: bool) -> None:
    """Count a committed (or replayed) transfer in the metrics."""
    kind = TK.Name(transfer.kind).removeprefix("TRANSFER_KIND_").lower()
    if replayed:
        metrics.REPLAYS.labels(kind).inc()
        return
    metrics.TRANSFERS.labels(kind).inc()
    if transfer.kind == TK.TRANSFER_KIND_RAKE:
        metrics.RAKE.labels(ids.parse_account_id(transfer.to_account).currency.value).inc(transfer.amount)


def reconcile_check(request: wallet_pb2.ReconcileEscrowRequest) -> ReconcileRequest:
    """The validated request (INVALID_ARGUMENT: no escrow named, both forms naming different escrows,
    an account that is not a table escrow, a bad player or hand id)."""
    if request.escrow_account:
        escrow = request.escrow_account
        if request.table_id and escrow_of(request.table_id, request.currency) != escrow:
            raise invalid(f"table_id: {request.table_id[:64]!r} names another escrow than escrow_account")
    elif request.table_id:
        escrow = escrow_of(request.table_id, request.currency)
    else:
        raise invalid("escrow_account: required (or table_id and currency)")
    return reconcile_request(request.request_id, escrow, request.seated_player_ids, request.settled_hand_id)


def record_reconciliation(result: Reconciliation) -> None:
    """Count a reconciliation that paid someone back (a replay counts nothing again)."""
    if result.replayed or not result.transfers:
        return
    currency = ids.parse_account_id(result.escrow).currency.value
    metrics.ESCROWS_RECONCILED.labels(currency).inc()
    metrics.ESCROW_CHIPS_RETURNED.labels(currency).inc(result.total)
    for transfer in result.transfers:
        record(transfer, False)


class WalletService(wallet_pb2_grpc.WalletServicer):
    def __init__(self, store: LedgerStore, workers: int) -> None:
        self.store = store
        self.limits = store.limits
        self.executor = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="ledger")

    async def _call(self, context: grpc.aio.ServicerContext, fn: Callable[..., T], *args: Any, fenced: str = "") -> T:
        """Run a store operation: its rejections keep their precise status, storage trouble is
        UNAVAILABLE (retryable), anything else INTERNAL (a defect: retrying would not help). A stale
        epoch (:class:`Fenced`) is also counted in ``wallet_fenced_total{kind=fenced}`` and logged."""
        try:
            return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
        except Fenced as err:
            if fenced:
                record_fenced(fenced, err)
            raise service_error(err) from None
        except LedgerError as err:
            raise service_error(err) from None
        except StoreUnavailable:
            # Storage trouble (connection lost, disk full): the transaction rolled back, so a
            # retry with the same idempotency key is safe.
            log.exception("ledger storage error")
            raise errors.unavailable(
                "ledger storage unavailable; retry with the same idempotency key", reason="STORAGE_UNAVAILABLE"
            ) from None
        except Exception:
            log.exception("unexpected ledger error")
            raise errors.ServiceError(
                grpc.StatusCode.INTERNAL, "the ledger failed unexpectedly; the wallet logged it", reason="LEDGER_FAULT"
            ) from None

    async def _check(self, context: grpc.aio.ServicerContext, fn: Callable[[], T]) -> T:
        try:
            return fn()
        except LedgerError as err:
            raise service_error(err) from None

    async def _transfer(
        self,
        context: grpc.aio.ServicerContext,
        make: Callable[[], TransferSpec],
        fence: Callable[[], Fence | None] = lambda: None,
    ) -> wallet_pb2.TransferResponse:
        def build() -> tuple[TransferSpec, Fence | None]:
            spec = make()
            spec.validate(self.limits.max_transfer)
            parse_account(spec.from_account, "from_account")
            parse_account(spec.to_account, "to_account")
            return spec, fence()

        spec, held = await self._check(context, build)
        transfer, replayed = await self._call(context, self.store.transfer, spec, held, fenced="transfer")
        record(transfer, replayed)
        return wallet_pb2.TransferResponse(transfer=transfer.to_proto(), replayed=replayed)

    @rpc
    async def OpenAccount(
        self, request: wallet_pb2.OpenAccountRequest, context: grpc.aio.ServicerContext
    ) -> wallet_pb2.OpenAccountResponse:
        currency = await self._check(context, lambda: check_open(request.kind, request.owner, request.currency))
        account, created = await self._call(context, self.store.open_account, request.kind, request.owner, currency)
        if created:
            log.info("account opened", extra={"account": account.account_id, "request_id": request.request_id})
        return wallet_pb2.OpenAccountResponse(account=account.to_proto(), created=created)

    @rpc
    async def Deposit(
        self, request: wallet_pb2.DepositRequest, context: grpc.aio.ServicerContext
    ) -> wallet_pb2.TransferResponse:
        def make() -> TransferSpec:
            _, _, currency = parse_account(request.account_id, "account_id")
            return TransferSpec(
                ledger.external_account(currency),
                request.account_id,
                request.amount,
                TK.TRANSFER_KIND_DEPOSIT,
                request.reference,
                request.idempotency_key,
            )

        return await self._transfer(context, make)

    @rpc
    async def Withdraw(
        self, request: wallet_pb2.WithdrawRequest, context: grpc.aio.ServicerContext
    ) -> wallet_pb2.TransferResponse:
        def make() -> TransferSpec:
            _, _, currency = parse_account(request.account_id, "account_id")
            return TransferSpec(
                request.account_id,
                ledger.external_account(currency),
                request.amount,
                TK.TRANSFER_KIND_WITHDRAWAL,
                request.reference,
                request.idempotency_key,
            )

        return await self._transfer(context, make)

    @rpc
    async def Transfer(
        self, request: wallet_pb2.TransferRequest, context: grpc.aio.ServicerContext
    ) -> wallet_pb2.TransferResponse:
        def make() -> TransferSpec:
            if request.kind == TK.TRANSFER_KIND_RAKE:
                # a rake without its hand's nets would leave the escrow's positions above its balance
                raise invalid("kind: a rake is booked with its hand's results (PostRake, cardroom.hand.settled)")
            return TransferSpec(
                request.from_account,
                request.to_account,
                request.amount,
                request.kind,
                request.reference,
                request.idempotency_key,
            )

        return await self._transfer(context, make, lambda: fence_of(request.fence))

    @rpc
    async def PostRake(
        self, request: wallet_pb2.PostRakeRequest, context: grpc.aio.ServicerContext
    ) -> wallet_pb2.PostRakeResponse:
        def make() -> HandSettlement:
            settlement = hand_settlement(
                request.hand_id, request.table_id, request.currency, request.rake, request.results
            )
            if settlement.rake is not None:
                settlement.rake.validate(self.limits.max_transfer)
            return settlement

        settlement = await self._check(context, make)
        transfer, replayed = await self._call(context, self.store.settle_hand, settlement)
        if transfer is None:
            return wallet_pb2.PostRakeResponse(replayed=replayed)
        record(transfer, replayed)
        return wallet_pb2.PostRakeResponse(transfer=transfer.to_proto(), replayed=replayed)

    @rpc
    async def ReconcileEscrow(
        self, request: wallet_pb2.ReconcileEscrowRequest, context: grpc.aio.ServicerContext
    ) -> wallet_pb2.ReconcileEscrowResponse:
        reconcile, fence = await self._check(context, lambda: (reconcile_check(request), fence_of(request.fence)))
        result = await self._call(context, self.store.reconcile, reconcile, fence, fenced="reconcile")
        record_reconciliation(result)
        if result.transfers and not result.replayed:
            log.info(
                "escrow reconciled",
                extra={
                    "escrow": result.escrow,
                    "returned": result.total,
                    "players": len(result.transfers),
                    "request_id": request.request_id,
                },
            )
        return wallet_pb2.ReconcileEscrowResponse(
            escrow_account=result.escrow,
            transfers=[t.to_proto() for t in result.transfers],
            total_returned=result.total,
            replayed=result.replayed,
        )

    @rpc
    async def ClaimTables(
        self, request: wallet_pb2.ClaimTablesRequest, context: grpc.aio.ServicerContext
    ) -> wallet_pb2.ClaimTablesResponse:
        fence = await self._check(context, lambda: claim_of(request.fence))
        epoch = await self._call(context, self.store.claim_tables, fence, fenced="claim")
        log.info("tables claimed", extra={"partition": fence.partition, "epoch": epoch})
        return wallet_pb2.ClaimTablesResponse(epoch=epoch)

    @rpc
    async def GetBalance(
        self, request: wallet_pb2.GetBalanceRequest, context: grpc.aio.ServicerContext
    ) -> wallet_pb2.Account:
        await self._check(context, lambda: parse_account(request.account_id, "account_id"))
        account = await self._call(context, self.store.get_account, request.account_id)
        return account.to_proto()

    @rpc
    async def ListTransfers(
        self, request: wallet_pb2.ListTransfersRequest, context: grpc.aio.ServicerContext
    ) -> wallet_pb2.ListTransfersResponse:
        def check() -> tuple[int, int]:
            parse_account(request.account_id, "account_id")
            if request.page_size < 0:
                raise invalid(f"page_size: must not be negative, got {request.page_size}")
            size = min(request.page_size or DEFAULT_PAGE, MAX_PAGE)
            after = 0
            if request.page_token:
                if not _PAGE_TOKEN.fullmatch(request.page_token):
                    raise invalid(f"page_token: {request.page_token!r} is not a token from ListTransfers")
                after = int(request.page_token)
            return size, after

        size, after = await self._check(context, check)
        rows = await self._call(context, self.store.list_transfers, request.account_id, after, size + 1)
        more = len(rows) > size
        rows = rows[:size]
        return wallet_pb2.ListTransfersResponse(
            transfers=[r.to_proto() for r in rows], next_page_token=str(rows[-1].transfer_id) if more else ""
        )

    @rpc
    async def GetLedgerSummary(
        self, request: wallet_pb2.GetLedgerSummaryRequest, context: grpc.aio.ServicerContext
    ) -> wallet_pb2.LedgerSummary:
        return await self._call(context, self.store.summary)
