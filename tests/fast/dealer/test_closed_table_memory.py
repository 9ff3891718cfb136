"""A closed table stays in its dealer (its id stays taken, late calls get its final answers), but it
takes no more commands, and its mailbox forgot old answers only when a new one came: every closed table
(one per sit-and-go or tournament table, all day) kept its last ten minutes' answers for good, some
120 KB of a 6-max table's (measured: 300 answers after 15 hands). The table's loop now wakes to forget
them when they expire, and then sleeps for good."""

from __future__ import annotations

import asyncio

from tests.fast.dealer.fakes import harness


def test_a_closed_table_forgets_its_answers_when_they_expire() -> None:
    async def body() -> None:
        h = harness(balances={"ann": 5000, "bob": 5000})
        await h.sit("ann", 1000, request_id="r-ann")
        await h.sit("bob", 1000, request_id="r-bob")
        await h.advance(1.0)
        waiter = await h.actor.submit(h.actor.close, "r-close")
        while not waiter.done():
            await h.advance(11)
        assert h.actor.closed and len(h.actor.mailbox.done) == 3
        window = h.actor.mailbox.remember_seconds

        await h.advance(window / 2)
        assert len(h.actor.mailbox.done) == 3  # a retry within the window still gets its first answer
        again = await h.actor.submit(h.actor.close, "r-close")
        assert [s.player_id for s in again.result()] == ["ann", "bob"]

        await h.advance(window)  # no command came: the loop itself forgot them
        assert not h.actor.mailbox.done
        assert h.actor._wait() is None  # and sleeps until a command comes
        # a late close is still answered from the table itself: it is closed, its stacks were cashed out
        late = await h.actor.submit(h.actor.close, "r-close")
        assert [(s.player_id, s.stack) for s in late.result()] == [(s.player_id, s.stack) for s in again.result()]
        await h.stop()

    asyncio.run(asyncio.wait_for(body(), 10))
