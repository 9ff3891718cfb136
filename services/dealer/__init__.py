"""The dealer service (issue 7): cash tables as asyncio actors over the table rules core.

``python -m dealer``; API in ``protos/cardroom/v1/dealer.proto``. Modules: ``service`` (gRPC),
``actor`` (one table, assembled from ``fanout``, ``snapshots``, ``writeahead``, ``hand_cycle``,
``commands`` and ``recovery`` over ``state``), ``redact`` / ``views`` (what each viewer may see),
``money`` (wallet calls), ``restore`` (reading the snapshots back), ``connections`` (the
connection monitor), ``warmup`` (evaluator tables before SERVING), ``showdown_check``
(evaluator cross-check), ``tablespec`` (settings). Kafka, the mailbox and the clock come
from :mod:`cardroom.runtime`.
"""
