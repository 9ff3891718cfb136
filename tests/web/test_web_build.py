"""The web client's build (issue 18: "The browser client's code is generated from `protos/` ...
never hand-written message types"; "TypeScript with a small, maintained toolchain (e.g. Vite);
`web/` at the top level; built by the project's own scripts"): scripts/build-web.sh makes web/dist
from the committed package-lock.json, every proto has its generated module, none of the generated
code, the dependencies or the build is committed, and the hand-written code declares no type of
its own under a proto message's name."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
from google.protobuf import descriptor_pool

from cardroom.v1 import (  # noqa: F401  (registers every message in the default pool)
    common_pb2,
    connection_monitor_pb2,
    dealer_pb2,
    evaluator_pb2,
    events_pb2,
    gateway_pb2,
    tournament_pb2,
    tournament_tables_pb2,
    wallet_pb2,
)
from tests.web.proxy import ROOT, build_web

pytestmark = pytest.mark.slow  # npm ci on a fresh clone

WEB = ROOT / "web"
PROTOS = ROOT / "protos" / "cardroom" / "v1"


@pytest.fixture(scope="module")
def dist() -> Path:
    return build_web()


def proto_message_names() -> set[str]:
    pool = descriptor_pool.Default()
    names: set[str] = set()
    for proto in PROTOS.glob("*.proto"):
        file = pool.FindFileByName(f"cardroom/v1/{proto.name}")
        stack = list(file.message_types_by_name.values())
        while stack:
            message = stack.pop()
            names.add(message.name)
            stack.extend(message.nested_types)
    return names


def test_every_proto_has_its_generated_module_and_none_is_committed(dist):
    generated = WEB / "src" / "gen" / "cardroom" / "v1"
    protos = sorted(p.stem for p in PROTOS.glob("*.proto"))
    assert protos and sorted(p.name.removesuffix("_pb.ts") for p in generated.glob("*_pb.ts")) == protos
    gateway = (generated / "gateway_pb.ts").read_text()
    assert "export const Gateway: GenService<" in gateway and "export type LobbyTable = Message<" in gateway
    tracked = subprocess.run(
        ["git", "ls-files", "web/src/gen", "web/node_modules", "web/dist"], cwd=ROOT, capture_output=True, text=True
    )
    assert tracked.returncode == 0 and tracked.stdout.strip() == "", tracked.stdout[:500]
    committed = subprocess.run(
        ["git", "ls-files", "web/package.json", "web/package-lock.json"], cwd=ROOT, capture_output=True, text=True
    )
    assert committed.stdout.split() == ["web/package-lock.json", "web/package.json"]


def test_the_dependencies_are_exact_pins_locked_and_the_build_uses_npm_ci():
    package = json.loads((WEB / "package.json").read_text())
    lock = json.loads((WEB / "package-lock.json").read_text())
    for group in ("dependencies", "devDependencies"):
        for name, version in package[group].items():
            assert re.fullmatch(r"\d+\.\d+\.\d+", version), f"{name}@{version} is not an exact pin"
            assert lock["packages"][f"node_modules/{name}"]["version"] == version, name
    for needed in ("@bufbuild/protobuf", "@connectrpc/connect", "@connectrpc/connect-web"):
        assert needed in package["dependencies"], needed
    for needed in ("@bufbuild/buf", "@bufbuild/protoc-gen-es", "typescript", "vite", "playwright-core"):
        assert needed in package["devDependencies"], needed
    script = (ROOT / "scripts" / "build-web.sh").read_text()
    assert "npm ci " in script and "npm install" not in script
    assert package["scripts"]["build"].startswith("buf generate && tsc --noEmit && vite build")


#: A declaration of a type: ``interface X``, ``class X``, ``enum X`` or ``type X = …`` / ``type X<T> = …``
#: (never ``import { type X }``, which uses the generated type).
DECLARATION = re.compile(r"\b(interface|class|enum)\s+(\w+)|\b(type)\s+(\w+)\s*(?:<[^>=]*>)?\s*=(?!=)")


def _declared_name(match: re.Match[str]) -> str:
    return match.group(2) or match.group(4)


def test_the_declaration_pattern_tells_declarations_from_type_imports():
    text = 'import { HandsFormat, type LobbyTable } from "x";\ninterface A {}\ntype B<T> = T[];\nclass C {}\n'
    assert [_declared_name(m) for m in DECLARATION.finditer(text)] == ["A", "B", "C"]


def test_hand_written_code_declares_no_proto_message_type():
    """A hand-written ``interface LobbyTable`` would drift from the proto: the types come from src/gen."""
    messages = proto_message_names()
    assert {"LobbyTable", "LoginResponse", "PlayerBalance", "Stakes"} <= messages
    sources = [p for p in (WEB / "src").rglob("*.ts") if "gen" not in p.relative_to(WEB / "src").parts]
    assert sources
    declared = {
        (source.name, _declared_name(match)) for source in sources for match in DECLARATION.finditer(source.read_text())
    }
    clashes = {(file, name) for file, name in declared if name in messages}
    assert not clashes, f"hand-written types named like proto messages: {sorted(clashes)}"
    api = (WEB / "src" / "api.ts").read_text()
    assert 'from "./gen/cardroom/v1/gateway_pb.js"' in api and "createGrpcWebTransport" in api


def test_the_build_is_an_index_page_with_its_bundles(dist):
    index = (dist / "index.html").read_text()
    bundles = re.findall(r'(?:src|href)="/(assets/[^"]+)"', index)
    assert any(b.endswith(".js") for b in bundles) and any(b.endswith(".css") for b in bundles), index
    for bundle in bundles:
        assert (dist / bundle).is_file(), bundle
    # The generated modules are in the bundle (its source map lists them): the client is built on them.
    script = next(b for b in bundles if b.endswith(".js"))
    sources = json.loads((dist / f"{script}.map").read_text())["sources"]
    assert any(s.endswith("src/gen/cardroom/v1/gateway_pb.ts") for s in sources), sources
    assert any("@connectrpc/connect-web" in s for s in sources), sources
