"""Dealer process wiring: clients, publisher, restored tables, the gRPC service."""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

import grpc

from cardroom.runtime.logs import setup_logging
from cardroom.runtime.publisher import AsyncPublisher
from cardroom.runtime.server import Registration, serve
from cardroom.runtime.transactions import PartitionWriters, TransactionalWriter, kafka_producer
from cardroom.v1 import dealer_pb2, dealer_pb2_grpc, tournament_tables_pb2, tournament_tables_pb2_grpc
from dealer import metrics
from dealer.config import DealerConfig
from dealer.connections import ConnectionEvents
from dealer.deps import Deps
from dealer.errors import DealerError, unavailable
from dealer.fences import Fences
from dealer.money import Wallet
from dealer.player_hands import PlayerHands
from dealer.restore import read_snapshots
from dealer.retired import actor_from_snapshot, settled
from dealer.service import DealerService, Tables
from dealer.shards import Membership, ShardSettings
from dealer.showdown_check import ShowdownChecker
from dealer.tournament_service import TournamentTablesService
from dealer.warmup import warm_evaluator

log = logging.getLogger("dealer")
T = TypeVar("T")


async def restore_tables(snapshots: dict[str, dealer_pb2.TableSnapshot], tables: Tables, close: bool) -> None:
    """Rebuild every table from its latest snapshot (see :mod:`dealer.restore`); ``close``: the
    ``DEALER_CRASH_POLICY=close`` of rules/003."""
    for table_id, snap in sorted(snapshots.items()):
        running = tables.actors.get(table_id)
        if running is not None:  # a release that did not finish: one table, never two actors here
            log.warning("table restored over one still running here; stopping it", extra={"table_id": table_id})
            try:
                async with asyncio.timeout(10):
                    await running.stop("moved")
            except TimeoutError:
                log.error("the table running here did not stop", extra={"table_id": table_id})
            running.mailbox.close(unavailable(f"table {table_id!r} was restored again; retry"))
        if settled(snap):  # closed, nothing to redo: kept as its snapshot (dealer.retired)
            tables.retired.keep(table_id, snap)
            continue
        actor = actor_from_snapshot(table_id, snap, tables.deps, tables.lookup)
        if not actor.closed:  # before the actor's loop runs: nothing else touches it yet
            await actor.recover(close)
        tables.add(actor)
        if not actor.closed:
            log.info(
                "table restored",
                extra={"table_id": table_id, "seated": len(snap.seats), "cancelled_hand": snap.hand_in_progress},
            )
    tables.refresh_gauges()


async def _gauges(tables: Tables) -> None:
    """Once a second: the closed tables with nothing left in memory retire (:mod:`dealer.retired`), then
    the table gauges."""
    while True:
        await tables.deps.clock.sleep(1.0)
        tables.retire_idle()
        tables.refresh_gauges()


async def until_done(what: str, step: Callable[[], Awaitable[T]], clock_sleep: Callable[[float], Awaitable[None]]) -> T:
    """``step()`` again (1 s, 2 s … every 10 s) until it succeeds: Kafka may be down at start."""
    delay = 1.0
    while True:
        try:
            return await step()
        except Exception as exc:  # noqa: BLE001 - any failure to reach the broker: wait and retry
            log.warning("waiting for Kafka", extra={"step": what, "error": repr(exc)[:300], "retry_s": delay})
            await clock_sleep(delay)
            delay = min(delay * 2, 10.0)


async def run(config: DealerConfig) -> None:
    # before any table can reach a showdown, and before SERVING: off the event loop
    await asyncio.get_running_loop().run_in_executor(None, warm_evaluator)
    # Connected while starting (serve's ``ready``): the dealer is live at once, even with Kafka down.
    publisher = AsyncPublisher(
        config.kafka_bootstrap,
        "dealer",
        observe=metrics.observe_publish,
        connect=False,
        linger_ms=config.kafka_linger_ms,
    )
    metrics.KAFKA_PUBLISH_PENDING.set_function(lambda: publisher.pending)
    t = config.topics
    metrics.known_topics((t.events, t.records, t.settled, t.snapshots, t.tournament_tables))
    fences = Fences(sharded=config.shards)
    deps = Deps(
        Wallet(config.wallet_addr, fences=fences),
        publisher,
        ShowdownChecker(config.evaluator_addr),
        config.topics,
        monitor_addr=config.monitor_addr,
        player_hands=PlayerHands(config.player_hands, config.player_hands_players),
        fences=fences,
    )
    bootstrap = config.kafka_bootstrap
    writers: PartitionWriters | None = None
    if bootstrap:  # one transactional id per partition of the tables: dealer.<snapshots topic>.<partition>

        def writer(transactional_id: str) -> TransactionalWriter:
            made = TransactionalWriter(
                transactional_id, "dealer", lambda: kafka_producer(bootstrap, transactional_id, "dealer", 10_000)
            )
            made.on_commit = metrics.TRANSACTION_BATCHES.observe
            made.may_reopen = functools.partial(still_ours, int(transactional_id.rsplit(".", 1)[1]))
            return made

        def still_ours(partition: int) -> bool | None:
            """Asked on a writer's thread after its transaction got stuck, before it takes its id again
            (which would fence a later holder): sharded, only while the wallet still knows this
            replica's claim as the latest (None: the wallet cannot tell now)."""
            if not config.shards:
                return True
            epoch = fences.epochs.get(partition)
            if epoch is None:
                return False
            claim = asyncio.run_coroutine_threadsafe(deps.wallet.claim_tables(partition, epoch), loop)
            try:
                claim.result(15)
            except DealerError as exc:
                return False if exc.code == grpc.StatusCode.FAILED_PRECONDITION else None
            except Exception:  # noqa: BLE001 - a timeout: ask again later
                claim.cancel()
                return None
            return True

        writers = PartitionWriters(f"dealer.{config.topics.snapshots}.", writer)
        deps.writers = writers
    tables = Tables(deps)
    loop = asyncio.get_running_loop()
    started: list[ConnectionEvents] = []
    gauges: list[asyncio.Task[None]] = []
    members: list[Membership] = []

    async def take(partition: int, epoch: int) -> bool:
        """docs/sharding.md: a partition assigned and claimed at ``epoch`` — the wallet first (lower
        epochs refused from now on), then its tables from their snapshots. False: a later claim exists."""
        for attempt in range(1, 6):
            try:
                await deps.wallet.claim_tables(partition, epoch)
                break
            except DealerError as exc:
                if exc.code == grpc.StatusCode.FAILED_PRECONDITION:
                    log.warning("claim of a partition is stale", extra={"partition": partition, "epoch": epoch})
                    metrics.PARTITION_CLAIMS.labels("stale").inc()
                    return False
                if attempt == 5:  # back to the group (a rebalance must not wait): claimed again later
                    metrics.PARTITION_CLAIMS.labels("failed").inc()
                    raise
                log.warning("wallet did not take the claim; retrying", extra={"error": exc.message[:300]})
                await deps.clock.sleep(1.0)
        if writers is not None:  # a previous holder's open transaction aborted, its later ones refused
            await until_done(
                f"transactions of partition {partition}",
                lambda: loop.run_in_executor(None, writers.open, partition),
                deps.clock.sleep,
            )
        fences.hold(partition, epoch)
        snapshots = await until_done(
            f"restore of partition {partition}",
            lambda: loop.run_in_executor(
                None, lambda: read_snapshots(bootstrap_of(config), config.topics.snapshots, partitions=[partition])
            ),
            deps.clock.sleep,
        )
        await restore_tables(snapshots, tables, config.crash_policy == "close")
        fences.serve(partition)
        metrics.PARTITION_CLAIMS.labels("taken").inc()
        metrics.PARTITIONS_HELD.set(len(fences.epochs))
        log.info("partition taken", extra={"partition": partition, "epoch": epoch, "tables": len(snapshots)})
        return True

    async def give_up(partitions: list[int], why: str) -> None:
        for partition in partitions:
            gone = await tables.release(partition)  # its transactional writer too
            metrics.PARTITION_RELEASES.labels(why).inc()
            log.info("partition given up", extra={"partition": partition, "why": why, "tables": len(gone)})
        metrics.PARTITIONS_HELD.set(len(fences.epochs))

    def fenced(partition: int) -> None:
        """The wallet knows a later claim: stop the partition's tables now (the group follows)."""
        for member in members:
            member.forget(partition)
        task = asyncio.create_task(give_up([partition], "fenced"))
        deps.background.add(task)
        task.add_done_callback(deps.background.discard)

    fences.on_fenced = fenced
    if writers is not None:
        writers.on_fenced = fenced

    def known(partitions: int) -> None:
        fences.partitions = partitions
        if writers is not None:
            writers.partitions = partitions

    def open_every_partition() -> None:
        """Unsharded: this dealer holds every partition's transactional id (a previous run's open
        transactions aborted before the restore reads the snapshots)."""
        assert writers is not None and publisher.producer is not None
        count = len(publisher.producer.partitions_for(config.topics.snapshots))
        if count < 1:
            raise ConnectionError(f"no partitions of {config.topics.snapshots} yet")
        writers.partitions = count
        missing = [p for p in range(count) if p not in writers.writers]
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, len(missing))) as pool:
            list(pool.map(writers.open, missing))

    async def become_ready() -> None:
        """Issue 14 item 10: the broker may be down; the tables come back once it is up."""
        if bootstrap:
            await until_done("producer", lambda: loop.run_in_executor(None, publisher.connect), deps.clock.sleep)
            if config.shards:  # the group gives this replica its partitions; each is restored when taken
                settings = ShardSettings(
                    bootstrap=bootstrap,
                    snapshots_topic=config.topics.snapshots,
                    directory_topic=config.directory_topic,
                    address=config.advertise_addr,
                    replica=config.replica,
                    group=config.shard_group,
                    session_timeout_ms=config.shard_session_ms,
                    heartbeat_interval_ms=max(1000, config.shard_session_ms // 5),
                )
                members.append(
                    Membership(settings, loop, known=known, take=take, give_up=give_up, clock=deps.clock.now)
                )
                members[0].start()
            else:
                await until_done(
                    "transactions", lambda: loop.run_in_executor(None, open_every_partition), deps.clock.sleep
                )
                snapshots = await until_done(
                    "restore",
                    lambda: loop.run_in_executor(None, read_snapshots, bootstrap, config.topics.snapshots),
                    deps.clock.sleep,
                )
                await restore_tables(snapshots, tables, config.crash_policy == "close")
        gauges.append(asyncio.create_task(_gauges(tables)))
        if bootstrap:
            connections = ConnectionEvents(bootstrap, config.connection_topic, loop, tables.connection_changed)
            connections.start()
            started.append(connections)

    async def leave_group() -> None:
        """After the drain (snapshots written): the others take this replica's partitions at once."""
        for member in members:
            await loop.run_in_executor(None, member.stop)

    async def stop_connections() -> None:
        for task in gauges:
            task.cancel()
        for connections in started:
            await loop.run_in_executor(None, connections.stop)

    async def close_allowances() -> None:
        for allowance in deps.allowances.values():
            try:
                await allowance.close()
            except Exception:
                log.exception("allowance close failed")

    async def flush_kafka() -> None:
        if writers is not None:
            writers.close_all()
        await publisher.aclose()

    name = dealer_pb2.DESCRIPTOR.services_by_name["Dealer"].full_name
    tournament_name = tournament_tables_pb2.DESCRIPTOR.services_by_name["TournamentTables"].full_name
    await serve(
        config.service,
        [
            Registration(name, dealer_pb2_grpc.add_DealerServicer_to_server, DealerService(tables)),
            Registration(
                tournament_name,
                tournament_tables_pb2_grpc.add_TournamentTablesServicer_to_server,
                TournamentTablesService(tables),
            ),
        ],
        # Each its own hook: one that fails never skips the rest (the Kafka flush above all).
        [
            leave_group,
            stop_connections,
            close_allowances,
            tables.stop,
            deps.wallet.close,
            deps.checker.close,
            flush_kafka,
        ],
        on_drain=lambda: tables.drain(config.drain_seconds),
        ready=become_ready,
    )


def main() -> None:
    config = DealerConfig.from_env()
    setup_logging("dealer", config.service.log_level)
    asyncio.run(run(config))


def bootstrap_of(config: DealerConfig) -> str:
    bootstrap = config.kafka_bootstrap
    if bootstrap is None:
        raise RuntimeError("dealer shards need Kafka (KAFKA_BOOTSTRAP)")
    return bootstrap
