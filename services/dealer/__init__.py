"""The dealer service (issue 7): cash tables as asyncio actors over the table rules core.

``python -m dealer``; API in ``protos/cardroom/v1/dealer.proto``. Modules: ``service`` (gRPC),
``actor`` (one table: commands, clock, hands, money, snapshots), ``redact`` / ``views``
(what each viewer may see), ``money`` (wallet calls), ``publisher`` (Kafka), ``restore``
(crash recovery), ``showdown_check`` (evaluator cross-check), ``tablespec`` (settings).
"""
