"""What a load-test run does: the scenario, its size and timing, the think-time distribution."""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path


# UP042 (StrEnum) would change str(Scenario.CASH) from "Scenario.CASH" to "cash": kept as it is.
class Scenario(str, Enum):  # noqa: UP042
    CASH = "cash"  # 6-max NL Hold'em, players think (log-normal think time)
    MAX = "max"  # the same tables, no think time: the card room's throughput
    CHURN = "churn"  # cash, and players leave after a few hands and sit down again
    RECONNECT = "reconnect"  # cash, and a share of the players drop their streams at once, then come back
    LOBBY = "lobby"  # cash, and lobby pollers
    TOURNAMENT = "tournament-burst"  # one large tournament, every player registers at once (burst.py)


#: z of the 90th percentile of the standard normal distribution.
Z90 = 1.2815515655446004


@dataclass(frozen=True)
class ThinkTime:
    """Think time per action, log-normal: ``median_ms`` and ``p90_ms`` fix mu and sigma
    (mu = ln median, sigma = ln(p90 / median) / z90), samples capped at ``max_ms`` (below the
    30 s action clock, so a thinking bot never times out). ``median_ms`` 0 = no think time.
    The defaults (mean about 6.3 s: a player's decision and the animations a real client shows, which
    the bots have not) with :class:`Folding`'s make a 6-max table play 69–119 hands an hour (measured),
    near a real online table's 70–90 (docs/capacity.md, "A real table's tempo"); until 2026-12-05 they were median
    1.2 s, p90 4 s, cap 12 s, which with the bots' mix played about 125 hands an hour."""

    median_ms: float = 4500.0
    p90_ms: float = 13500.0
    max_ms: float = 24000.0

    @property
    def mu(self) -> float:
        return math.log(self.median_ms / 1000)

    @property
    def sigma(self) -> float:
        return math.log(self.p90_ms / self.median_ms) / Z90 if self.p90_ms > self.median_ms else 0.0

    def sample(self, rng: random.Random) -> float:
        """Seconds to think before the next action."""
        if self.median_ms <= 0:
            return 0.0
        return min(self.max_ms / 1000, rng.lognormvariate(self.mu, self.sigma))

    def describe(self) -> str:
        if self.median_ms <= 0:
            return "none (act as soon as it is the player's turn)"
        mean = math.exp(self.mu + self.sigma**2 / 2)
        return (
            f"log-normal, median {self.median_ms / 1000:g} s, p90 {self.p90_ms / 1000:g} s "
            f"(mu {self.mu:.3f}, sigma {self.sigma:.3f}, mean {mean:.2f} s), capped at {self.max_ms / 1000:g} s"
        )


#: The players' play in the max-throughput scenario (``LoadSettings.effective_folding`` None).
BOTS_MIX = "the bots' mix: fold about 1 time in 9 facing a bet"


@dataclass(frozen=True)
class Folding:
    """How often a player folds when he faces a bet (checking is not possible): ``preflop`` before
    the board, ``later`` after it. With the defaults a 6-max table plays close to a real online one: a
    player facing the blinds plays 30 % of his hands (real 6-max players put money in 25–30 % of the
    time), and a hand takes 6–7 actions (docs/capacity.md, "A real table's tempo"). The bots of ``cardroom bots``
    hardly fold (about 1 time in 9 facing a bet: ``Folding(0.11, 0.11)`` plays the same mix)."""

    preflop: float = 0.7
    later: float = 0.45

    def __post_init__(self) -> None:
        for name in ("preflop", "later"):
            share = getattr(self, name)
            if not 0.0 <= share <= 1.0:
                raise ValueError(f"fold share {name}: between 0 and 1, got {share}")

    def share(self, board: list[str]) -> float:
        """The fold share facing a bet at this point of the hand (no board: before the flop)."""
        return self.later if board else self.preflop

    def describe(self) -> str:
        return f"facing a bet: fold {self.preflop:.0%} before the flop, {self.later:.0%} after it"


@dataclass
class LoadSettings:
    gateway: str
    operator_token: str
    scenario: Scenario = Scenario.CASH
    tables: int = 10
    players_per_table: int = 6
    seats: int = 6
    game: str = "NT"
    ramp: float = 10.0  # seconds over which the players sit down (evenly)
    steady: float = 30.0  # seconds of steady state once every player sat down (the summary's window)
    think: ThinkTime = field(default_factory=ThinkTime)
    folding: Folding = field(default_factory=Folding)
    hand_pause: float = 1.0  # the table's pause between hands (s)
    churn_hands: float = 5.0  # churn: mean hands a player stays before leaving (geometric)
    churn_away: float = 2.0  # churn: seconds away before sitting down again
    storm_every: float = 20.0  # reconnect: seconds between storms
    storm_fraction: float = 0.5  # reconnect: share of the players dropping their stream in a storm
    storm_away: float = 12.0  # reconnect: seconds away (over the monitor's silence = disconnect rules)
    lobby_pollers: int = 0  # clients polling the lobby (the lobby scenario: one per 6 players)
    lobby_every: float = 2.0  # seconds between one poller's lobby calls
    prefix: str = "lt"
    seed: int | None = None
    generators: int = 1  # load-generator processes sharing the players (whole tables each); 1 = this process
    setup_concurrency: int = 16  # concurrent set-up calls (logins, joins, table creation)
    out_dir: Path = Path("var/loadtest")
    baseline_seconds: float = 3.0  # per baseline mode (unary, bidi stream); 0 = no baseline
    progress_every: float = 1.0
    stop_spread: float = 5.0  # seconds over which the players stand up at the end
    profile_seconds: float = 0.0  # py-spy record on the profiled services in the steady state; 0 = none
    profile: tuple[str, ...] = ("dealer", "gateway")
    profile_native: bool = False  # py-spy --native: the C/C++ frames too (grpc, protobuf)
    escrow_settle: float = 10.0  # seconds to read escrow_vs_stacks again while it is not 0 (settling)
    # the tournament burst
    entrants: int = 100  # players registering at once
    buy_in: int = 1000  # cents, into the prize pool
    fee: int = 100  # cents, to the house
    retry_share: float = 0.2  # share of the players sending their request id again
    tournament_addr: str = "127.0.0.1:20056"  # the tournament service (CreateTournament is the operator's)
    tls_dir: Path | None = None  # the operator identity's certificate for it (mutual TLS); None = plaintext
    tournament_token: str = ""  # its TOURNAMENT_OPERATOR_TOKEN, when set

    @property
    def players(self) -> int:
        return self.tables * self.players_per_table

    @property
    def duration(self) -> float:
        """The planned seconds: the ramp and the steady state (longer when sitting down lags the ramp)."""
        return self.ramp + self.steady

    @property
    def ramp_grace(self) -> float:
        """How long after the ramp the steady state waits at most for the last players to sit down."""
        return max(10.0, self.ramp)

    def steady_begins(self, now: float, arrived: int) -> bool:
        """Whether the steady state begins at ``now`` (seconds since the start of the ramp): the
        ramp's time is over and every player's first sit-down has ended (``arrived``: seated, or
        given up) — or :attr:`ramp_grace` has passed since. A backlog of sit-downs is the ramp's,
        not the steady state's."""
        return now >= self.ramp and (arrived >= self.players or now >= self.ramp + self.ramp_grace)

    def effective_lobby_pollers(self) -> int:
        if self.lobby_pollers:
            return self.lobby_pollers
        return max(1, self.players // 6) if self.scenario is Scenario.LOBBY else 0

    def effective_think(self) -> ThinkTime:
        return ThinkTime(0.0, 0.0, 0.0) if self.scenario is Scenario.MAX else self.think

    def effective_folding(self) -> Folding | None:
        """None in the max-throughput scenario: its players play the bots' mix (hardly folding), as in
        the runs before :class:`Folding` (their figures stay comparable)."""
        return None if self.scenario is Scenario.MAX else self.folding
