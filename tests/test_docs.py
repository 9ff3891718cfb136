"""The README's examples, checked (issue 10: "runnable README examples are executed by a docs test").

Every fenced block of README.md is one of:

* **run**: the `cardroom` CLI examples that need no running service are executed, in order, in a
  scratch directory (with the input files they name made first), and must exit 0 with the output
  they describe;
* **checked, not run** (they need `make run`'s services, and grpcurl is not installed here):
  grpcurl examples — the method must exist in the protos and each ``-d`` body must parse as that
  method's request message; Python examples — must compile and use only names the generated
  modules have;
* **not an example**: command output, the layout listing, and `make` targets (``make test`` is
  this suite, ``make run`` starts the services).

A block the test cannot classify fails the test, so a new README example must be made runnable or
be marked here with the reason it is not.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from google.protobuf import descriptor_pool, json_format, message_factory

from cardroom.core import phh
from cardroom.core.engine import ActionKind, DeckSource, Hand, SeatIn, Stakes, Variant
from cardroom.core.shuffle import commitment, deck_from_seed, reshuffle_seed
from cardroom.runtime.config import DEFAULT_PORTS
from cardroom.v1 import connection_monitor_pb2, dealer_pb2, evaluator_pb2, gateway_pb2, tournament_pb2, wallet_pb2  # noqa: F401  (registers every service and message in the default pool)

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
CARDROOM = Path(sys.executable).with_name("cardroom")

NOT_RUN = {
    "grpcurl": "needs grpcurl and the services of `make run`",
    "make": "make targets: `make test` is this suite, `make run` / `make bench` start services or benchmarks",
    ".venv/bin/cardroom play": "needs the gateway of `make run`",
    "cardroom bench": "a benchmark (`make bench`); timings are not tests",
}


@dataclass(frozen=True)
class Block:
    line: int  # 1-based line of the opening fence
    lang: str
    text: str

    def commands(self) -> list[str]:
        """Lines with backslash continuations joined, blank lines and comment-only lines dropped."""
        joined = re.sub(r"\\\n\s*", " ", self.text)
        return [c.strip() for c in joined.splitlines() if c.strip() and not c.strip().startswith("#")]


def readme_blocks() -> list[Block]:
    blocks, lines = [], README.read_text(encoding="utf-8").splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("```"):
            start, lang = i, lines[i][3:].strip()
            i += 1
            body = []
            while not lines[i].startswith("```"):
                body.append(lines[i])
                i += 1
            blocks.append(Block(start + 1, lang, "\n".join(body) + "\n"))
        i += 1
    return blocks


def kind_of(block: Block) -> str:
    """run | grpcurl | python | text | make | play (see the module docstring)."""
    if block.lang == "python":
        return "python"
    if block.lang != "sh":
        return "text"
    commands = block.commands()
    if all(c.startswith("grpcurl ") for c in commands):
        return "grpcurl"
    if all(c.startswith("cardroom ") for c in commands):
        return "run"
    if all(c.startswith("make ") for c in commands):
        return "make"
    if all(c.startswith(("make ", ".venv/bin/cardroom play ")) for c in commands):
        return "play"
    return "unknown"


BLOCKS = readme_blocks()


def test_every_readme_block_is_classified() -> None:
    kinds = {block.line: kind_of(block) for block in BLOCKS}
    assert "unknown" not in kinds.values(), {line: kind for line, kind in kinds.items() if kind == "unknown"}
    # the README has examples of every kind this test knows; losing one means the parser broke
    assert {"run", "grpcurl", "python", "text", "make", "play"} <= set(kinds.values()), kinds


# ---- run: the cardroom CLI -------------------------------------------------------------------------------
def _signed_hand_record(path: Path) -> None:
    """A hand dealt from a seed's deck, written like the dealer's records (``_seed``, ``_commitment``)."""
    seed = bytes(range(32))
    seats = [SeatIn(1, "alice", 200), SeatIn(2, "bob", 200), SeatIn(3, "carol", 200)]
    hand = Hand(
        Variant.parse("NT"), Stakes.blinds(1, 2), seats, 3, DeckSource(deck_from_seed(seed), reshuffle_seed(seed))
    )
    while not hand.is_over:
        legal = hand.legal_actions()
        assert legal is not None
        if ActionKind.CHECK in legal.kinds:
            hand.check()
        else:
            hand.call()
    path.write_text(
        phh.dumps(hand, _hand_id="docs-1", _seed=seed.hex(), _commitment=commitment(seed)), encoding="utf-8"
    )


def _prepare_inputs(directory: Path) -> None:
    """The input files the CLI examples name: ``hands.npy`` (Omaha hi-lo rows) and ``hand.phh``."""
    rng = np.random.default_rng(10)
    rows = np.array([rng.permutation(52)[:9] for _ in range(64)], dtype=np.int8)  # 4 hole + 5 board
    np.save(directory / "hands.npy", rows)
    _signed_hand_record(directory / "hand.phh")


def _run(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    argv: list[str] = []
    for word in shlex.split(command, comments=True):  # the README's globs expanded as a shell would
        argv += sorted(str(p.relative_to(cwd)) for p in cwd.glob(word)) if "*" in word else [word]
    argv[0] = str(CARDROOM)
    return subprocess.run(argv, cwd=cwd, capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_the_cardroom_cli_examples_run_as_written(tmp_path: Path) -> None:
    """Each command of the README's `cardroom` block, in order, in one directory."""
    [block] = [b for b in BLOCKS if kind_of(b) == "run"]
    _prepare_inputs(tmp_path)
    ran = []
    for command in block.commands():
        if command.startswith("cardroom bench"):
            continue  # NOT_RUN["cardroom bench"]
        result = _run(command, tmp_path)
        assert result.returncode == 0, f"README line {block.line}: {command}\n{result.stdout}\n{result.stderr}"
        ran.append((shlex.split(command, comments=True)[1], result.stdout))
    outputs = dict(ran)
    assert [name for name, _ in ran] == ["version", "eval", "eval", "simulate", "phh", "simulate", "verify-hand"]
    assert outputs["version"].startswith("cardroom ")
    assert "category: Straight Flush" in ran[1][1] and "cards: Ah Kh Qh Jh Th" in ran[1][1]
    assert np.load(tmp_path / "lows.npy").shape == (64,)
    assert len(list((tmp_path / "hands").glob("*.phh"))) == 100
    replayed = [json.loads(line) for line in outputs["phh"].splitlines()]
    assert len(replayed) == 100 and all("finishing_stacks" in r for r in replayed)
    assert len(list((tmp_path / "session").glob("*.phh"))) >= 1
    [verdict] = [json.loads(line) for line in outputs["verify-hand"].splitlines()]
    assert verdict["ok"] is True and verdict["hand_id"] == "docs-1", verdict


# ---- checked, not run: grpcurl and Python against the services --------------------------------------------
GRPCURL = [(b.line, c) for b in BLOCKS if kind_of(b) == "grpcurl" for c in b.commands()]


@pytest.mark.parametrize("line,command", GRPCURL, ids=[f"README:{line}" for line, _ in GRPCURL])
def test_grpcurl_examples_name_real_methods_and_valid_request_bodies(line: int, command: str) -> None:
    """Not run: NOT_RUN["grpcurl"]. The method exists and the JSON body is its request message."""
    argv = shlex.split(command)
    positional = [a for i, a in enumerate(argv[1:], 1) if not a.startswith("-") and argv[i - 1] not in ("-d", "-H")]
    address, *method = positional
    assert address in {f"127.0.0.1:{grpc_port}" for grpc_port, _ in DEFAULT_PORTS.values()}, address
    if method == ["list"]:
        return
    [full_name] = method
    service_name, method_name = full_name.split("/")
    service = descriptor_pool.Default().FindServiceByName(service_name)
    request_type = service.methods_by_name[method_name].input_type
    body = argv[argv.index("-d") + 1] if "-d" in argv else "{}"
    request = message_factory.GetMessageClass(request_type)()
    json_format.Parse(body, request)  # raises on an unknown field or a wrong value
    assert request.ByteSize() > 0 or body == "{}"


PYTHON = [b for b in BLOCKS if kind_of(b) == "python"]


@pytest.mark.parametrize("block", PYTHON, ids=[f"README:{b.line}" for b in PYTHON])
def test_python_examples_compile_and_use_existing_names(block: Block) -> None:
    """Not run: they call the services of `make run`. Every ``alias.Name`` of an imported
    ``cardroom.v1`` module must exist."""
    tree = ast.parse(block.text)
    compile(tree, f"README.md:{block.line}", "exec")
    modules = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module == "cardroom.v1":
            for alias in node.names:
                modules[alias.asname or alias.name] = __import__(f"cardroom.v1.{alias.name}", fromlist=["_"])
    used = [
        (n.value.id, n.attr)
        for n in ast.walk(tree)
        if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in modules
    ]
    assert used, "the example uses no generated name: the check would be empty"
    missing = [f"{alias}.{name}" for alias, name in used if not hasattr(modules[alias], name)]
    assert missing == []
