"""Fast tier: the client's Play stream asks for bursts with the answers to its actions in them and
hands its caller one event at a time, the answer after its burst's events (gateway.proto
OpenTable.bursts and results_in_bursts), so the bots, the load test and the terminal read it as before."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from cardroom.client.connection import OPEN_REQUEST_ID, GatewayClient, PlayStream
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g


class _Call:
    """A Play call's events, as grpc.aio's stream-stream call iterates them."""

    def __init__(self, events: list[g.PlayEvent]) -> None:
        self.events = events

    async def __aiter__(self) -> AsyncIterator[g.PlayEvent]:
        for event in self.events:
            yield event


def test_a_burst_is_read_as_its_events_in_order_and_other_messages_pass_as_they_are() -> None:
    burst = d.TableEventBatch(
        events=[
            d.TableEvent(sequence=4, action=d.Action(seat=1)),
            d.TableEvent(sequence=5, turn_started=d.TurnStarted()),
        ]
    )
    result = g.PlayEvent(result=g.PlayResult(request_id="r1"))
    stream = PlayStream(_Call([g.PlayEvent(table_burst=burst), result]))  # type: ignore[arg-type]

    async def read() -> list[g.PlayEvent]:
        return [event async for event in stream]

    seen = asyncio.run(read())
    assert [e.WhichOneof("kind") for e in seen] == ["table", "table", "result"]
    assert [e.table.sequence for e in seen[:2]] == [4, 5] and seen[2] == result


def test_the_stream_opens_its_table_asking_for_bursts() -> None:
    async def opened() -> g.PlayRequest:
        client = GatewayClient("127.0.0.1:9")  # never dialled: the request is only queued
        stream = client.play("t1")
        request = stream.queue.get_nowait()
        stream.cancel()
        await client.close()
        return request

    request = asyncio.run(opened())
    assert request.request_id == OPEN_REQUEST_ID and request.open.table_id == "t1" and request.open.bursts
    assert request.open.results_in_bursts


def test_the_answer_in_a_burst_is_read_after_the_burst_s_events_as_a_result() -> None:
    answer = g.PlayResult(request_id="a1", act=d.ActResponse(hand_number=3))
    burst = g.PlayEvent(
        table_burst=d.TableEventBatch(events=[d.TableEvent(sequence=7, action=d.Action(seat=2))]), burst_result=answer
    )
    stream = PlayStream(_Call([burst]))  # type: ignore[arg-type]

    async def read() -> list[g.PlayEvent]:
        return [event async for event in stream]

    seen = asyncio.run(read())
    assert [e.WhichOneof("kind") for e in seen] == ["table", "result"]
    assert seen[0].table.sequence == 7 and seen[1].result == answer


def test_items_give_each_event_as_its_kind_and_message_the_burst_s_answer_after_its_events() -> None:
    answer = g.PlayResult(request_id="a2", act=d.ActResponse(hand_number=9))
    burst = g.PlayEvent(
        table_burst=d.TableEventBatch(
            events=[d.TableEvent(sequence=8, action=d.Action(seat=3)), d.TableEvent(sequence=9)]
        ),
        burst_result=answer,
    )
    error = g.PlayError(request_id="a3", code="FAILED_PRECONDITION")
    stream = PlayStream(_Call([burst, g.PlayEvent(error=error), g.PlayEvent(pong=g.Pong())]))  # type: ignore[arg-type]

    async def read() -> list[tuple[str, object]]:
        return [item async for item in stream.items()]

    seen = asyncio.run(read())
    assert [kind for kind, _ in seen] == ["table", "table", "result", "error", "pong"]
    assert [m.sequence for _, m in seen[:2]] == [8, 9]  # type: ignore[attr-defined]
    assert seen[2][1] == answer and seen[3][1] == error
