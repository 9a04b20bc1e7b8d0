"""A bot written in Go from docs/PROTOCOL.md (clients/go), built with Debian's packages only, and the
reconnection advice of PROTOCOL.md at the conformance kit's tightest clock.

`clients/go/build.sh` generates the Go code from the .proto and compiles in GOPATH mode against
/usr/share/gocode. A developer without Go or those libraries sees the Go tests skipped with the
reason; with CI=true they fail instead (.ci/apt-packages installs everything).
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
from functools import partial
from pathlib import Path
from typing import NoReturn

import pytest
import trio
from support import ROOT, arena
from support.conformance import CASES, conformance, failed

from arena.conformance.kit import run_cases
from arena.engine import VARIANT_NAMES
from arena.referee.seat import TimeControl
from arena.server.local import EXAMPLE_BOTS

GO_DIR = ROOT / "clients" / "go"
PROTOCOL = ROOT / "docs" / "PROTOCOL.md"
APT_PACKAGES = ROOT / ".ci" / "apt-packages"
GOCODE = Path("/usr/share/gocode/src")
# The Go libraries the bot imports, by the Debian package that ships them.
GO_LIBRARIES = {
    "golang-google-grpc-dev": "google.golang.org/grpc",
    "golang-google-protobuf-dev": "google.golang.org/protobuf",
    # APIv2-backed github.com/golang/protobuf: grpc's codec marshals through it; with the 1.3
    # package, the alternative apt picks for golang-google-grpc-dev, the bot compiles and panics at
    # its first Send. registry.go is new in 1.4.
    "golang-github-golang-protobuf-1-5-dev": "github.com/golang/protobuf/proto/registry.go",
}
# The kit's tightest clock: the reconnect case breaks the stream after the request, while its
# clock runs, so a bot must be back and answer within this.
TIGHTEST_CLOCK_MS = 100
IN_CI = os.environ.get("CI") == "true"


def missing(reason: str) -> NoReturn:
    """Skip on a developer's machine; in CI a missing tool is a failure."""
    if IN_CI:
        pytest.fail(f"{reason}, and CI=true: CI must provide it (.ci/apt-packages)")
    pytest.skip(reason)


def go_packages_of_the_docs() -> set[str]:
    """The Debian packages PROTOCOL.md's Go install line names."""
    text = PROTOCOL.read_text(encoding="utf-8")
    lines = [line for line in text.splitlines() if line.startswith("apt-get install") and "# Go" in line]
    assert len(lines) == 1, f"PROTOCOL.md needs exactly one `apt-get install … # Go…` line, not {lines}"
    return set(lines[0].split("#")[0].split()[2:])


def ci_packages() -> set[str]:
    lines = APT_PACKAGES.read_text(encoding="utf-8").splitlines()
    return {line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")}


@pytest.fixture(scope="session")
def go_bot(tmp_path_factory: pytest.TempPathFactory) -> str:
    tools = ["go", "protoc", "protoc-gen-go", "protoc-gen-go-grpc"]
    absent = [tool for tool in tools if shutil.which(tool) is None]
    if absent:
        missing(f"the Go toolchain is incomplete: {', '.join(absent)} not found")
    libraries = [package for package, path in GO_LIBRARIES.items() if not (GOCODE / path).exists()]
    if libraries:
        missing(f"Debian's Go libraries are missing: apt-get install {' '.join(libraries)}")
    out = tmp_path_factory.mktemp("go-bot")
    done = subprocess.run(
        ["bash", str(GO_DIR / "build.sh"), str(out)], capture_output=True, text=True, timeout=900
    )
    if done.returncode != 0:
        output = done.stdout[-3000:] + done.stderr[-3000:]
        pytest.fail(f"clients/go/build.sh failed ({done.returncode}):\n{output}")
    binary = out / "arena_go_bot"
    assert binary.is_file() and os.access(binary, os.X_OK)
    return shlex.quote(str(binary))


# --------------------------------------------------------------------------- the recipe in the docs


def test_the_go_install_line_of_the_docs_is_what_the_build_and_ci_use() -> None:
    """PROTOCOL.md's Go line names every package the build needs, and CI installs each of them."""
    documented = go_packages_of_the_docs()
    header = (GO_DIR / "build.sh").read_text(encoding="utf-8").split("set -euo")[0]
    build_line = re.search(r"apt-get install ((?:[^\n]*\\\n)*[^\n]*)", header)
    assert build_line is not None, "clients/go/build.sh names no apt-get install line"
    needed = set(build_line.group(1).replace("\\", " ").replace("#", " ").split())
    assert needed - documented == {"protobuf-compiler"}  # installed by the line above it
    assert "protobuf-compiler" in PROTOCOL.read_text(encoding="utf-8").split("# Go")[0]
    assert set(GO_LIBRARIES) <= documented
    assert not {"golang-goprotobuf-dev", "golang-github-golang-protobuf-1-3-dev"} & documented
    assert needed <= ci_packages(), f"not in .ci/apt-packages: {sorted(needed - ci_packages())}"
    # The recipe's GOPATH line is the one build.sh runs.
    text = PROTOCOL.read_text(encoding="utf-8")
    assert 'GO111MODULE=off GOPATH="$gopath:/usr/share/gocode" go build' in (GO_DIR / "build.sh").read_text()
    assert "GO111MODULE=off GOPATH=" in text and ":/usr/share/gocode go build" in text


# --------------------------------------------------------------------------- the Go bot plays


@pytest.mark.parametrize("variant", VARIANT_NAMES)
def test_the_go_bot_plays_a_match_without_a_fault(tmp_path: Path, go_bot: str, variant: str) -> None:
    done = arena(
        "play", "--variant", variant, "--bot", go_bot, "--seed", "5", "--replay-dir", tmp_path, "--json"
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["termination"] == "completed"
    go_seat = result["seats"][0]
    assert go_seat["hello"] and go_seat["bot_name"] == "go-first-legal"
    assert go_seat["faults"] == 0 and go_seat["rejected"] == 0, go_seat
    assert go_seat["exit_code"] == 0
    assert result["faults"] == [0] * len(result["seats"])
    verified = arena("replay", "verify", result["replay"])
    assert verified.returncode == 0, verified.stdout + verified.stderr
    assert "ok" in verified.stdout and "match completed" in verified.stdout


def test_the_go_bot_refuses_an_address_without_a_port(go_bot: str) -> None:
    """gRPC would dial port 443 and retry quietly; the bot says what is wrong, exit status 2."""
    for address in ("127.0.0.1", "127.0.0.1:abc", "127.0.0.1:99999"):
        env = {**os.environ, "ARENA_ADDRESS": address, "ARENA_TOKEN": "t"}
        done = subprocess.run(shlex.split(go_bot), env=env, capture_output=True, text=True, timeout=10)
        assert done.returncode == 2, (address, done.stderr)
        assert address in done.stderr and "port" in done.stderr
        assert len(done.stderr.strip().splitlines()) == 1


# --------------------------------------------------------------------------- the reconnection advice


def test_the_go_bot_passes_the_whole_kit(go_bot: str) -> None:
    status, report = conformance(go_bot)
    assert failed(report) == {}
    assert status == 0
    assert report["passed"] == sum(len(CASES[v]) for v in VARIANT_NAMES)


def built_sdk_bot(sdk: str) -> str:
    """The bot command of one SDK; Node's and C++'s as tests/clients/test_clients.py builds them
    (it runs first in this folder), skipped when not built yet."""
    if sdk == "python":
        return EXAMPLE_BOTS["random"]
    if sdk == "node":
        node = shutil.which("node")
        if node is None or not (ROOT / "clients/node/node_modules/@grpc/grpc-js").is_dir():
            pytest.skip("Node.js or clients/node/node_modules missing (test_clients.py installs them)")
        return f"{shlex.quote(node)} {shlex.quote(str(ROOT / 'clients/node/random_bot.js'))}"
    binary = ROOT / "clients/cpp/build/arena_random_bot"
    source = ROOT / "clients/cpp/random_bot.cpp"
    if not binary.exists() or binary.stat().st_mtime < source.stat().st_mtime:
        pytest.skip("clients/cpp/build/arena_random_bot missing or stale (test_clients.py builds it)")
    return shlex.quote(str(binary))


@pytest.mark.parametrize("sdk", ["python", "node", "cpp"])
def test_the_sdks_dial_again_in_time_at_the_tightest_clock(tmp_path: Path, sdk: str) -> None:
    """The SDKs follow PROTOCOL.md's advice (redial at once): the reconnect case passes at 100 ms
    in every variant, where a first pause of 0.1 s ran out the clock."""
    command = built_sdk_bot(sdk)
    cases = [case for variant in VARIANT_NAMES for case in CASES[variant] if case.name == "reconnect"]
    assert len(cases) == len(VARIANT_NAMES)
    clock = TimeControl(per_decision_ms=TIGHTEST_CLOCK_MS, bank_ms=0, increment_ms=0)
    # A wall clock of 100 ms on a shared machine: a case may lose a few tens of milliseconds to the
    # scheduler, so each gets three tries. A first pause of 0.1 s alone runs out the clock, so a bot
    # that follows the old advice fails every try.
    for case in cases:
        for _ in range(3):
            [result] = trio.run(partial(run_cases, command, [case], time_control=clock, log_dir=tmp_path))
            if result.passed:
                break
        assert result.passed, (case.variant, result.detail)
        assert result.result is not None and result.result.reconnects >= 1


def test_the_reconnect_advice_of_the_docs_fits_the_tightest_clock() -> None:
    """PROTOCOL.md tells bots to dial again at once after a break, not after a pause the kit's
    tightest clock cannot hold."""
    text = " ".join(PROTOCOL.read_text(encoding="utf-8").split())
    section = text.split("## 5. When the stream breaks")[1].split("## 6.")[0]
    assert "dial again at once" in section.lower()
    assert f"{TIGHTEST_CLOCK_MS} ms" in section
    assert "start at 0.1 s" not in text


# --------------------------------------------------------------------------- the SDKs' READMEs


@pytest.mark.parametrize("sdk", ["python", "node", "cpp", "go"])
def test_every_sdk_readme_covers_every_variant(sdk: str) -> None:
    """Each README names every variant, american's bid and call, and american's trick numbers."""
    text = (ROOT / "clients" / sdk / "README.md").read_text(encoding="utf-8")
    absent = [variant for variant in VARIANT_NAMES if f"`{variant}`" not in text]
    assert absent == [], f"clients/{sdk}/README.md does not name {absent}"
    assert "bid" in text and "call" in text
    if sdk != "go":  # the Go bot reads no view
        assert "1…18" in text
