"""Playing at a table in a real browser (issue 18, "Tests": "sign up, log in, sit at a bot table, play
several hands of Hold'em ..., raise with the slider, fold, check the pot and stacks after a hand
against the wallet; screenshots of each step saved as test artifacts. A page must never show another
player's hole cards before the showdown (test it)").

Debian's Chromium (playwright-core, web/e2e/table.mjs) signs up, opens a No Limit Hold'em table from
the lobby, sits down with a buy-in and plays four hands — a raise set with the slider, a hand
checked and called to the showdown, a fold — against a second player this test seats through the
gateway (WatchMyTable and TableCommand, as a browser would: he checks or calls); after the first
hand it adds chips (rules/002: between hands, up to the table's maximum buy-in), and at its next
turn the page loses its connection (Envoy stopped and started) and resumes the table when it comes back,
then acts. Then the page
leaves the table, and the lobby shows the player's last hands with their export as PokerStars
text. Checked against the dealer's and the wallet's truth: the stacks and the results
the page showed after each hand are the ones in the other player's stream; the raise is the
amount set on the slider; the balances on the pages are the wallet's, and no chip is lost; and
no card of the other player ever entered the page but those the dealer showed at the showdown
(rules/003: cards are shown at the showdown; mucked hands are never shown).

Screenshots of each step: the test's tmp_path/screens."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest

from cardroom.client.connection import GatewayClient
from cardroom.client.view import TableView
from cardroom.core import ids
from cardroom.v1 import (
    common_pb2,
    dealer_pb2 as d,
    gateway_pb2 as g,
    gateway_pb2_grpc,
    wallet_pb2 as w,
    wallet_pb2_grpc,
)
from tests.e2e.stack import OPERATOR_TOKEN, PLAY_GRANT, Stack
from tests.web.proxy import ROOT, EnvoyProcess

pytestmark = [pytest.mark.slow, pytest.mark.kafka]

OPERATOR = (("authorization", f"Operator {OPERATOR_TOKEN}"),)
HANDS = 4  # at least; until the raise, the call and the fold are played
BUY_IN = 1000
ADD_CHIPS = 300


@dataclass
class Opponent:
    """The other player, as a browser plays: one WatchMyTable stream, a TableCommand per decision
    (check when he may, else call); his stream folded by the terminal client's TableView."""

    address: str
    table_id: str
    name: str = field(default_factory=lambda: f"opp{uuid.uuid4().hex[:6]}")
    events: list[d.TableEvent] = field(default_factory=list)
    finished: dict[int, dict[str, int]] = field(default_factory=dict)  # hand -> player -> stack after it
    results: dict[int, list[str]] = field(default_factory=dict)  # hand -> the result lines
    stop: threading.Event = field(default_factory=threading.Event)
    seated: threading.Event = field(default_factory=threading.Event)
    error: BaseException | None = None
    balance: int = 0
    seat: int = 0  # 0: any free seat
    think: float = 0.0  # seconds before each decision (a slower hand)

    def run(self) -> None:
        try:
            asyncio.run(self._play())
        except BaseException as exc:  # reported by the test
            self.error = exc
            self.seated.set()

    async def _play(self) -> None:
        client = GatewayClient(self.address)
        view = TableView(me=self.name)
        try:
            await client.login(self.name)
            call = client.stub.WatchMyTable(g.WatchMyTableRequest(table_id=self.table_id), metadata=client.metadata)
            session = ""
            inbox: asyncio.Queue[g.PlayEvent] = asyncio.Queue()

            async def pump() -> None:  # reads the stream (a read cancelled would cancel the call)
                async for item in call:
                    await inbox.put(item)

            reader = asyncio.create_task(pump())
            while not self.stop.is_set():
                if reader.done():
                    reader.result()  # the stream's error, if it failed
                    raise AssertionError("the WatchMyTable stream ended")
                try:
                    event = await asyncio.wait_for(inbox.get(), 0.5)
                except TimeoutError:
                    continue
                if event.WhichOneof("kind") == "session":
                    session = event.session.session_id
                    await client.join(self.table_id, BUY_IN, seat=self.seat)
                    continue
                if event.WhichOneof("kind") != "table":
                    continue
                e = event.table
                self.events.append(e)
                view.apply(e)
                kind = e.WhichOneof("event")
                if any(s.player_id == self.name for s in view.seats.values()):
                    # his seat_changed, or a snapshot taken after his sit-down: the sit-down can reach the
                    # dealer before this session's place in the table's feed (a sit-down is quick now)
                    self.seated.set()
                if kind == "hand_finished":
                    self.finished[view.hand_number] = {s.player_id: s.stack for s in view.seats.values()}
                    self.results[view.hand_number] = list(view.results)
                turn = view.turn_shown(e)  # also a snapshot: his turn may begin before it (the same race)
                if turn is not None:
                    if self.think:
                        await asyncio.sleep(self.think)
                    request = g.TableCommandRequest(
                        session_id=session, request_id=uuid.uuid4().hex, act=self.choose(turn)
                    )
                    request.act.hand_number = view.hand_number
                    await client.stub.TableCommand(request, metadata=client.metadata, timeout=30)
            call.cancel()
            reader.cancel()
            await client.leave(self.table_id)
            await asyncio.sleep(1.0)
            balances = {b.currency: b.balance for b in (await client.balances()).balances}
            self.balance = balances[common_pb2.CURRENCY_PLAY]
        finally:
            await client.close()

    @staticmethod
    def choose(la: d.LegalActionsView) -> g.PlayAction:
        """Check, else call, else the bring-in; at a draw he stands pat."""
        for action in (d.ACTION_TYPE_DRAW, d.ACTION_TYPE_CHECK, d.ACTION_TYPE_CALL):
            if action in la.actions:
                return g.PlayAction(action=action)
        return g.PlayAction(action=d.ACTION_TYPE_BRING_IN, amount=la.bring_in)

    def hole_cards(self, hand: int) -> list[str]:
        """His face-down cards in ``hand`` (from his stream: he sees them), drawn ones included."""
        seat = self.seat_in(hand)
        cards: list[str] = []
        for e in self.events:
            if e.hand_number != hand:
                continue
            if e.WhichOneof("event") == "cards_dealt" and e.cards_dealt.seat == seat and not e.cards_dealt.face_up:
                cards.extend(e.cards_dealt.cards)
            if e.WhichOneof("event") == "action" and e.action.seat == seat:
                cards.extend(e.action.received)
        return cards

    def up_cards(self, hand: int) -> list[str]:
        """His cards dealt face up in ``hand`` (Stud): every player sees them."""
        seat = self.seat_in(hand)
        return [
            c
            for e in self.events
            if e.hand_number == hand
            and e.WhichOneof("event") == "cards_dealt"
            and e.cards_dealt.seat == seat
            and e.cards_dealt.face_up
            for c in e.cards_dealt.cards
        ]

    def seat_in(self, hand: int) -> int:
        for e in self.events:
            if e.WhichOneof("event") == "hand_started" and e.hand_started.hand_number == hand:
                return next(s.seat for s in e.hand_started.seats if s.player_id == self.name)
        return 0

    def shown(self, hand: int, seat: int) -> list[str]:
        return [
            c
            for e in self.events
            if e.hand_number == hand and e.WhichOneof("event") == "hand_shown" and e.hand_shown.seat == seat
            for c in e.hand_shown.cards
        ]

    def stood_up(self, player: str) -> d.SeatView | None:
        """The seat ``player`` left (its stack: the chips that went back to his wallet)."""
        return next(
            (
                e.seat_changed.seat
                for e in self.events
                if e.WhichOneof("event") == "seat_changed"
                and e.seat_changed.change == "stood_up"
                and e.seat_changed.seat.player_id == player
            ),
            None,
        )

    def actions_of(self, player: str) -> list[d.Action]:
        return [e.action for e in self.events if e.WhichOneof("event") == "action" and e.action.player_id == player]


def create_table(stack: Stack, variant: str = "NT", stakes: d.Stakes | None = None) -> str:
    table_id = f"web-play-{variant.lower()}-{uuid.uuid4().hex[:6]}"
    config = d.TableConfig(
        name=f"Browser {variant} {table_id[-6:]}",
        variant=variant,
        currency=common_pb2.CURRENCY_PLAY,
        seats=6,
        stakes=stakes or d.Stakes(small_blind=5, big_blind=10),
        min_buy_in=200,
        max_buy_in=2000,
        clock=d.ClockSettings(action_seconds=120, draw_seconds=120),  # no decision times out on a loaded machine
        hand_pause_seconds=2.5,  # the page's result stays up long enough to be read
    )
    with grpc.insecure_channel(stack.address("gateway")) as channel:
        gateway_pb2_grpc.GatewayOperatorStub(channel).CreateTable(
            d.CreateTableRequest(table_id=table_id, config=config), metadata=OPERATOR, timeout=10
        )
    return table_id


def drive(
    envoy: EnvoyProcess,
    chromium: str,
    env: dict[str, str],
    screens: Path,
    before_sitting: Callable[[], None] = lambda: None,
) -> dict:
    env = {**os.environ, **env, "BASE_URL": envoy.url, "ARTIFACTS": str(screens), "CHROMIUM": chromium}
    # The driver prints DROP when the page's connection is to break: Envoy is stopped (the stream
    # and the page's reconnections fail) and started again on the same port. With POST_NOW=1 it
    # prints SIT and waits for a line before sitting down (``before_sitting`` returns first).
    proc = subprocess.Popen(
        ["node", "e2e/table.mjs"],
        cwd=ROOT / "web",
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    timer = threading.Timer(480, proc.kill)
    timer.start()
    lines = []
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.strip() == "DROP":
                envoy.stop()
                time.sleep(2.0)
                envoy.start()
            elif line.strip() == "SIT":
                before_sitting()
                assert proc.stdin is not None
                proc.stdin.write("GO\n")
                proc.stdin.flush()
            else:
                lines.append(line.rstrip("\n"))
        stderr = proc.stderr.read() if proc.stderr else ""
        proc.wait(60)
    finally:
        timer.cancel()
    result = subprocess.CompletedProcess(proc.args, proc.returncode, "\n".join(lines), stderr)
    lines = [line for line in lines if line.strip()]
    assert lines, f"the browser driver printed nothing (status {result.returncode}):\n{result.stderr[-3000:]}"
    seen = json.loads(lines[-1])
    assert result.returncode == 0 and "error" not in seen, (
        f"{seen.get('error')}\nconsole: {seen.get('console')}\nfailed: {seen.get('failedRequests')}\n"
        f"last decisions: {seen.get('decisions', [])[-2:]}\n"
        f"envoy:\n{envoy.logs()[-2000:]}"
    )
    return seen


def play(
    room: tuple[Stack, EnvoyProcess, str], tmp_path: Path, table_id: str, **env: str
) -> tuple[dict, Opponent, str]:
    """The page plays at ``table_id`` against an :class:`Opponent`; what it showed, the opponent, the
    page's player."""
    stack, envoy, chromium = room
    opponent = Opponent(stack.address("gateway"), table_id)
    thread = threading.Thread(target=opponent.run, daemon=True)
    thread.start()
    assert opponent.seated.wait(60) and opponent.error is None, opponent.error
    player, screens = f"web{uuid.uuid4().hex[:8]}", tmp_path / "screens"
    env = {"PLAYER": player, "PASSWORD": "correct horse battery", "TABLE": table_id, "BUY_IN": str(BUY_IN)} | env
    try:
        seen = drive(envoy, chromium, env, screens)
        for _ in range(300):  # the other player sees the page's player leave
            if opponent.stood_up(player) is not None or opponent.error is not None:
                break
            time.sleep(0.1)
    finally:
        opponent.stop.set()
        thread.join(60)
    assert opponent.error is None, opponent.error

    # A screenshot per step, real PNG files, in the test's directory.
    names = [s["name"] for s in seen["steps"]]
    assert names[:3] == ["lobby", "table-before-sitting", "seated"]
    assert names[-2:] == ["lobby-after-leaving", "lobby-history"]
    assert sum(n.endswith("-result") for n in names) >= int(env["HANDS"])
    for s in seen["steps"]:
        assert Path(s["path"]).parent == screens and Path(s["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    # (Envoy stopped, Chromium logs the broken stream and each refused request; the page's own
    # errors are what counts)
    dropped = ("ERR_CONNECTION_REFUSED", "ERR_INCOMPLETE_CHUNKED_ENCODING")
    errors = [c for c in seen["console"] if c.startswith("error") and not any(n in c for n in dropped)]
    assert seen["failedRequests"] == [] and not errors, seen
    assert seen["decisions"] and all("refused" not in x for x in seen["decisions"]), seen["decisions"]
    return seen, opponent, player


def check_against_the_dealer_and_the_wallet(stack: Stack, seen: dict, opponent: Opponent, player: str) -> None:
    """What the page showed against the truth: the dealer's events (the other player's stream) and
    the wallet; the last hands and their PokerStars export against the gateway's MyHands."""
    added = int(seen["addChips"]["amount"]) if "addChips" in seen else 0
    # The buy-in box holds the table's limits; after sitting the page shows the wallet's balance.
    assert seen["buyInLimits"] == ["200", "2000"]
    assert int(seen["hands"][0]["balance"]) == PLAY_GRANT - BUY_IN

    # Only the legal actions were offered: never check and call together, never bet and raise together.
    for x in seen["decisions"]:
        offered = set(x["offered"])
        assert not {"check", "call"} <= offered and not {"bet", "raise"} <= offered, x

    # After each hand the page showed the stacks and the pot results the dealer sent (the other
    # player's stream, folded by the terminal client's view).
    for hand in seen["hands"]:
        n = hand["hand"]
        assert n in opponent.finished, (n, sorted(opponent.finished))
        shown_stacks = {s["player"]: int(s["stack"]) for s in hand["seats"]}
        assert shown_stacks == opponent.finished[n], (n, shown_stacks, opponent.finished[n])
        assert hand["results"] == opponent.results[n]
        won = sum(int(m) for line in hand["results"] for m in re.findall(r"wins (\d+)", line))
        assert won > 0 and hand["pot"] == "0"  # the pot was paid out
    assert sum(int(s["stack"]) for s in seen["hands"][-1]["seats"]) == 2 * BUY_IN + added  # a play table: no rake

    # Never another player's hole cards before the showdown: at every decision (before the
    # showdown by construction) none of his face-down cards is anywhere in the page and his seat
    # shows backs (or, in Stud, the cards dealt face up); and no card of his ever entered the page
    # but his up cards and those the dealer showed at the showdown.
    for x in seen["decisions"]:
        theirs = opponent.hole_cards(x["hand"])
        assert len(theirs) >= 2 and "??" not in theirs
        assert not set(theirs) & set(x["allCards"]), (x["hand"], theirs, x["allCards"])
        other = next(s for s in x["seats"] if not s["me"])
        assert all(c == "??" or c in opponent.up_cards(x["hand"]) for c in other["cards"]), other
    for shown in seen["othersCards"]:
        n, seat = shown["hand"], opponent.seat_in(shown["hand"])
        assert shown["seat"] == seat and shown["card"] in opponent.shown(n, seat) + opponent.up_cards(n), shown

    # The balances against the wallet: the lobby after leaving shows what the wallet holds, the
    # buy-in and the stack he left with accounted for, and both players' chips add up.
    with stack.channel("wallet") as channel:
        account = wallet_pb2_grpc.WalletStub(channel).GetBalance(
            w.GetBalanceRequest(account_id=ids.player_account_id(player, ids.Currency.PLAY)), timeout=10
        )
    left = opponent.stood_up(player)
    assert left is not None
    assert account.balance == PLAY_GRANT - BUY_IN - added + left.stack
    if not seen["beforeLeaving"]["inHand"] and left.stack:  # left between hands: with the stack on the page
        assert left.stack == next(int(s["stack"]) for s in seen["beforeLeaving"]["seats"] if s["me"])
    play_money = next(b for b in seen["lobbyBalance"] if b["currency"] == "play")
    assert int(play_money["amount"]) == account.balance
    assert account.balance + opponent.balance == 2 * PLAY_GRANT
    check_history(stack, seen, opponent, player)
    check_lobby_figures(stack, seen, opponent)


def check_lobby_figures(stack: Stack, seen: dict, opponent: Opponent) -> None:
    """The lobby's average pot of the table is the dealer's: the mean of its hands' pots (what was
    awarded, with the rake) rounded down, all played within the hour; hands per hour is positive."""
    pots: dict[int, int] = {}
    for e in opponent.events:
        if e.WhichOneof("event") == "pot_awarded":
            pots[e.hand_number] = pots.get(e.hand_number, 0) + e.pot_awarded.amount + e.pot_awarded.rake
    row = seen["lobbyTable"]
    assert row is not None and int(row["hands"]) == len(pots) >= 1, (row, pots)
    assert int(row["averagePot"]) == sum(pots.values()) // len(pots), (row, pots)
    assert row["averagePotText"] == f"{sum(pots.values()) // len(pots):,}" and int(row["handsPerHour"]) > 0


def check_history(stack: Stack, seen: dict, opponent: Opponent, player: str) -> None:
    """The lobby's last hands are the gateway's MyHands for the player (newest first), and the export
    link downloads the dealer's PokerStars text of them, which never holds a card of the other
    player that was not shown (rules/003: mucked hands are never shown)."""
    with grpc.insecure_channel(stack.address("gateway")) as channel:
        gateway = gateway_pb2_grpc.GatewayStub(channel)
        login = gateway.Login(g.LoginRequest(player_id=player, password="correct horse battery"), timeout=10)
        auth = (("authorization", f"Bearer {login.token}"),)
        mine = gateway.MyHands(g.MyHandsRequest(limit=20, format=g.HANDS_FORMAT_POKERSTARS), metadata=auth, timeout=10)
    history = seen["history"]
    assert [h["handId"] for h in history["hands"]] == [h.hand_id for h in mine.hands]
    assert {int(h["hand"].lstrip("#")) for h in history["hands"]} >= {h["hand"] for h in seen["hands"]}
    for row, hand in zip(history["hands"], mine.hands, strict=True):
        assert row["tableId"] == hand.table_id and int(row["net"]) == hand.net
        own = next(s for s in hand.seats if s.seat == hand.seat)
        assert row["cards"] == " ".join(own.cards) and own.cards
    assert history["exported"] == mine.pokerstars and history["fileName"].startswith(f"cardroom-{player}-")
    assert history["exported"].count("PokerStars Hand #") == len(mine.hands) and player in history["exported"]
    for hand in mine.hands:
        shown = opponent.shown(hand.hand_number, opponent.seat_in(hand.hand_number))
        hidden = set(opponent.hole_cards(hand.hand_number)) - set(shown)
        # (in that hand's own text: the card may be dealt to anyone in another hand)
        leaked = [c for c in hidden if re.search(rf"(?<![A-Za-z0-9]){re.escape(c)}(?![A-Za-z0-9])", hand.pokerstars)]
        assert not leaked, (hand.hand_number, leaked, hand.pokerstars)


def test_play_hold_em_hands_in_chromium(web_stack, tmp_path: Path) -> None:
    stack = web_stack[0]
    seen, opponent, player = play(
        web_stack, tmp_path, create_table(stack), HANDS=str(HANDS), ADD_CHIPS=str(ADD_CHIPS), RECONNECT="1"
    )
    check_against_the_dealer_and_the_wallet(stack, seen, opponent, player)

    # Chips added after the first hand (rules/002: "NEVER DURING A HAND"; a top-up stays within the
    # table's maximum buy-in): the form offered at most the room up to the maximum, the wallet paid
    # them (the page's balance line), and the dealer added them to the seat (now, or before the next
    # deal when the next hand had started: the page said so).
    add = seen["addChips"]
    assert int(add["max"]) == 2000 - int(add["stackBefore"]), add
    assert int(add["balance"]) == PLAY_GRANT - BUY_IN - ADD_CHIPS, add
    added = [
        e.seat_changed.seat
        for e in opponent.events
        if e.WhichOneof("event") == "seat_changed"
        and e.seat_changed.change == "chips_added"
        and e.seat_changed.seat.player_id == player
    ]
    assert len(added) == 1, added
    if "before the next hand" in add["message"]:
        assert any(
            e.WhichOneof("event") == "seat_changed" and e.seat_changed.change == "chips_queued" for e in opponent.events
        )
    else:
        assert add["message"] == f"{ADD_CHIPS} added.", add
        assert added[0].stack == int(add["stackBefore"]) + ADD_CHIPS == int(add["stackAfter"]), (add, added)
        assert add["maxAfter"] is None or int(add["maxAfter"]) == 2000 - int(add["stackAfter"])

    # Reconnect: offline mid-hand at his turn the page said the connection was lost; back online it
    # opened the table again and showed the same hand — seats, stacks, bets, his cards, the board,
    # the pot, his turn with the same legal actions — and his action then was the dealer's.
    reconnect = seen["reconnect"]
    before, offline, after = reconnect["before"], reconnect["offline"], reconnect["after"]
    assert "Connection lost" in offline["message"], offline
    assert before["inHand"] and after["inHand"] and after["myTurn"]
    for key in ("hand", "seats", "board", "pot", "offered"):
        assert after[key] == before[key], (key, before[key], after[key])
    assert len(next(s for s in after["seats"] if s["me"])["cards"]) == 2
    acted = [x for x in seen["decisions"] if x["hand"] == before["hand"]]
    assert acted and "refused" not in acted[0], acted
    mine_then = [
        e.action
        for e in opponent.events
        if e.WhichOneof("event") == "action" and e.hand_number == before["hand"] and e.action.player_id == player
    ]
    assert mine_then, "the page's player did not act in the hand it reconnected in"

    # The plan was played: a raise set with the slider (the box followed it, the dealer took that
    # amount), a fold, and at least one decision checked or called.
    decisions = seen["decisions"]
    raises = [x for x in decisions if x["action"] in ("raise", "bet")]
    assert raises, decisions
    slider = raises[0]["slider"]
    assert slider["box"] == slider["target"] and slider["min"] <= slider["target"] <= slider["max"]
    mine = opponent.actions_of(player)
    assert any(a.action in (d.ACTION_TYPE_RAISE, d.ACTION_TYPE_BET) and a.to == slider["target"] for a in mine)
    assert any(a.action == d.ACTION_TYPE_FOLD for a in mine) and any(x["action"] == "fold" for x in decisions)
    assert any(x["action"] in ("check", "call") for x in decisions)
    for x in decisions:  # Hold'em: two hole cards, none of the other's shown before the showdown
        assert len(opponent.hole_cards(x["hand"])) == 2
        assert next(s for s in x["seats"] if not s["me"])["cards"] in ([], ["??", "??"])
    showdowns = [n for n in opponent.finished if opponent.shown(n, opponent.seat_in(n))]
    assert showdowns, "no showdown was played"
    assert {c["hand"] for c in seen["othersCards"]} <= set(showdowns)


@pytest.mark.parametrize(
    ("variant", "stakes"),
    [("F7S", d.Stakes(small_bet=10, big_bet=20)), ("F2L3D", d.Stakes(small_bet=10, big_bet=20))],
    ids=["stud", "triple-draw"],
)
def test_play_stud_and_a_draw_game_in_chromium(web_stack, tmp_path: Path, variant: str, stakes: d.Stakes) -> None:
    """One hand and more of Fixed Limit Seven Card Stud (up cards, the bring-in) and of 2-7 Triple
    Draw (two cards clicked and thrown at each draw), checked or called to the end."""
    stack = web_stack[0]
    seen, opponent, player = play(web_stack, tmp_path, create_table(stack, variant, stakes), HANDS="1", PLANS="call")
    check_against_the_dealer_and_the_wallet(stack, seen, opponent, player)
    decisions = seen["decisions"]
    # limit games: a bet box, when there is one, holds the one fixed amount and cannot be changed —
    # but in Stud with an open pair on fourth street (rules/001: "if a player has an open pair, he has
    # the option of betting the full amount"): the small bet or the big bet
    boxes = [x["box"] for x in decisions if "box" in x]
    open_pair = {"min": str(stakes.small_bet), "max": str(stakes.big_bet), "readOnly": False}
    assert all((b["min"] == b["max"] and b["readOnly"]) or (variant == "F7S" and b == open_pair) for b in boxes), boxes
    actions = [a for e in opponent.events if e.WhichOneof("event") == "action" for a in [e.action]]
    if variant == "F7S":
        # rules/003 (Stud): the lowest up card brings in; the page showed the other's up cards
        assert any(a.action == d.ACTION_TYPE_BRING_IN for a in actions)
        assert any(c != "??" for x in decisions for s in x["seats"] if not s["me"] for c in s["cards"]), (
            "no up card of the other player shown"
        )
    else:
        draws = [x for x in decisions if x["action"] == "draw"]
        assert draws and all(x["drawLabel"] == "Discard 2" and len(x["discards"]) == 2 for x in draws), draws
        mine = [a for a in opponent.actions_of(player) if a.action == d.ACTION_TYPE_DRAW]
        assert len(mine) == len(draws) and all(a.discarded == 2 for a in mine)


def test_post_the_big_blind_now_at_a_running_table_in_chromium(web_stack, tmp_path: Path) -> None:
    """rules/000 (Hold'em, Blinds): "When a new player sits down at a Texas Hold'em poker game, he must
    either post the equivalent of the big blind or wait for their turn in the big blind."

    Three players the test seats through the gateway (seats 1-3) play; the page's player sits down at
    seat 4 with "post the big blind now" ticked while the button is on seat 3, so that the next hand's
    big blind is seat 3 and seat 4 is between the big blind and the button: a player waiting for the
    big blind is not dealt in there, one posting now is. The dealer must deal him in at that very
    hand with a big blind posted, and the page must never show him waiting for it."""
    stack, envoy, chromium = web_stack
    table_id = create_table(stack)
    bots = [Opponent(stack.address("gateway"), table_id, seat=n, think=0.7) for n in (1, 2, 3)]
    threads = [threading.Thread(target=b.run, daemon=True) for b in bots]
    for bot, thread in zip(bots, threads, strict=True):
        thread.start()
        assert bot.seated.wait(60) and bot.error is None, bot.error
    watcher = bots[0]

    def button_on_seat_3() -> None:
        """Until a hand is under way with the button on seat 3 (the next one's button: seat 1)."""
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and watcher.error is None:
            started = [e for e in list(watcher.events) if e.WhichOneof("event") == "hand_started"]
            finished = {e.hand_number for e in list(watcher.events) if e.WhichOneof("event") == "hand_finished"}
            if started and started[-1].hand_started.button == 3 and started[-1].hand_number not in finished:
                return
            time.sleep(0.05)
        raise AssertionError(f"no hand with the button on seat 3 ({watcher.error})")

    player, screens = f"web{uuid.uuid4().hex[:8]}", tmp_path / "screens"
    env = {
        "PLAYER": player,
        "PASSWORD": "correct horse battery",
        "TABLE": table_id,
        "BUY_IN": str(BUY_IN),
        "HANDS": "1",
        "PLANS": "call",
        "POST_NOW": "1",
    }
    try:
        seen = drive(envoy, chromium, env, screens, before_sitting=button_on_seat_3)
        for _ in range(300):  # the others see the page's player leave
            if watcher.stood_up(player) is not None or watcher.error is not None:
                break
            time.sleep(0.1)
    finally:
        for bot in bots:
            bot.stop.set()
        for thread in threads:
            thread.join(60)
    assert all(b.error is None for b in bots), [b.error for b in bots]
    names = [s["name"] for s in seen["steps"]]
    assert names[:3] == ["lobby", "table-before-sitting", "seated"] and any(n.endswith("-result") for n in names)
    for s in seen["steps"]:
        assert Path(s["path"]).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert seen["failedRequests"] == [] and not [c for c in seen["console"] if c.startswith("error")], seen

    # The dealer seated him posting now (not waiting for the big blind), and so did the page: no
    # "waiting for the big blind" mark and no "post the big blind now" button offered.
    events = watcher.events
    sat_at = next(
        i
        for i, e in enumerate(events)
        if e.WhichOneof("event") == "seat_changed"
        and e.seat_changed.change == "sat_down"
        and e.seat_changed.seat.player_id == player
    )
    sat = events[sat_at].seat_changed.seat
    assert sat.seat == 4 and not sat.waiting_for_big_blind, sat
    assert "waiting for the big blind" not in seen["afterSitting"]["marks"], seen["afterSitting"]
    assert seen["afterSitting"]["postNowButton"] is False

    # The next hand: button seat 1, big blind seat 3 — and he is dealt in at seat 4 with a big blind
    # of his own posted (a waiting player would sit it out).
    first = next(e for e in events[sat_at:] if e.WhichOneof("event") == "hand_started")
    assert first.hand_started.button == 1, (
        f"he sat down too late (hand {first.hand_number}'s button {first.hand_started.button})"
    )
    assert player in [s.player_id for s in first.hand_started.seats], first.hand_started
    forced = [
        e.forced_bet for e in events if e.hand_number == first.hand_number and e.WhichOneof("event") == "forced_bet"
    ]
    assert any(f.seat == 3 and f.kind == "big_blind" and f.amount == 10 for f in forced), forced
    assert [f.amount for f in forced if f.seat == 4] == [10], forced

    # He played that hand in the page; the page's stacks after it are the dealer's.
    assert first.hand_number in {x["hand"] for x in seen["decisions"]}, seen["decisions"]
    for hand in seen["hands"]:
        if hand["hand"] in watcher.finished:
            shown = {s["player"]: int(s["stack"]) for s in hand["seats"]}
            assert shown == watcher.finished[hand["hand"]], (hand["hand"], shown, watcher.finished[hand["hand"]])
    with stack.channel("wallet") as channel:
        account = wallet_pb2_grpc.WalletStub(channel).GetBalance(
            w.GetBalanceRequest(account_id=ids.player_account_id(player, ids.Currency.PLAY)), timeout=10
        )
    left = watcher.stood_up(player)
    assert left is not None and account.balance == PLAY_GRANT - BUY_IN + left.stack
