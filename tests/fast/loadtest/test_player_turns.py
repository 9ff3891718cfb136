"""The load test's player acts once per turn: a TurnStarted repeated for the same turn (the time bank
started) gets no second action, and a new turn that comes before the answer to the last act (the
burst the act brought — the action, the next street, the player on turn again — can reach the player
before the act's result does) gets its own action instead of being taken for the same turn and left
to the action clock (docs/capacity.md, failure 3)."""

from __future__ import annotations

import asyncio

from cardroom.client.loadtest.settings import Scenario
from cardroom.v1 import dealer_pb2 as d, gateway_pb2 as g
from tests.fast.loadtest.players import QueuedStream, load_player

ME, OTHER = "bot-1", "bot-2"
TABLE = d.TableInfo(table_id="t-1", min_buy_in=100, max_buy_in=1000)


def _turn(sequence: int, time_bank: bool = False) -> d.TableEvent:
    legal = d.LegalActionsView(seat=1, player_id=ME, actions=[d.ACTION_TYPE_CHECK], time_bank_running=time_bank)
    return d.TableEvent(table_id="t-1", sequence=sequence, hand_number=3, turn_started=d.TurnStarted(to_act=legal))


class ScriptedStream(QueuedStream):
    """A Play stream: a hand in progress with the player on turn; each act is answered by ``answer``."""

    def __init__(self, answer) -> None:
        super().__init__()
        self.acts: list[g.PlayRequest] = []
        self.answer = answer
        seats = [
            d.SeatView(seat=1, player_id=ME, stack=500, in_hand=True),
            d.SeatView(seat=2, player_id=OTHER, stack=500, in_hand=True),
        ]
        state = d.TableState(info=TABLE, hand_number=3, in_hand=True, seats=seats)
        self.put(d.TableEvent(table_id="t-1", sequence=1, hand_number=3, snapshot=state), _turn(2))

    def put(self, *events: d.TableEvent) -> None:
        for event in events:
            self.events.put_nowait(g.PlayEvent(table=event))

    async def send(self, request: g.PlayRequest) -> None:
        if request.WhichOneof("kind") == "act":
            self.acts.append(request)
            self.answer(self, request)


def _result(stream: ScriptedStream, request: g.PlayRequest) -> None:
    stream.events.put_nowait(g.PlayEvent(result=g.PlayResult(request_id=request.request_id)))


def _played(answer) -> list[g.PlayRequest]:
    bot = load_player(ME, TABLE, scenario=Scenario.MAX)  # no think time
    stream = ScriptedStream(answer)

    async def play() -> None:
        task = asyncio.create_task(bot._play(stream, 0.0, False))  # type: ignore[arg-type]
        for _ in range(200):
            await asyncio.sleep(0)
        stream.events.put_nowait(None)
        await asyncio.wait_for(task, 5)

    asyncio.run(play())
    return stream.acts


def test_a_new_turn_before_the_answer_to_the_last_act_is_acted_on() -> None:
    def answer(stream: ScriptedStream, request: g.PlayRequest) -> None:
        if len(stream.acts) == 1:  # the burst of the act first (check, the flop, my turn again), then its result
            action = d.TableEvent(table_id="t-1", sequence=3, hand_number=3, action=d.Action(seat=1))
            board = d.TableEvent(table_id="t-1", sequence=4, hand_number=3, board_dealt=d.BoardDealt())
            stream.put(action, board, _turn(5))
        _result(stream, request)

    acts = _played(answer)
    assert len(acts) == 2, acts
    assert acts[0].request_id != acts[1].request_id


def test_a_turn_announced_again_gets_no_second_action() -> None:
    def answer(stream: ScriptedStream, request: g.PlayRequest) -> None:
        _result(stream, request)

    def announced_again(stream: ScriptedStream, request: g.PlayRequest) -> None:
        stream.put(_turn(3, time_bank=True))  # the same turn: the time bank started while the act was out
        _result(stream, request)

    assert len(_played(answer)) == 1
    assert len(_played(announced_again)) == 1
