"""The compiled and the pure engine (and encoder) agree byte for byte (setup.py, docs/ARCHITECTURE.md).

tests/engine_digest.py plays the same random matches of every variant and option set under both
builds (the pure one through ARENA_PURE_PYTHON=1, which imports the .py sources even where the
compiled modules are installed) and prints a digest per match.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support import ROOT

import arena.engine

DIGEST = ROOT / "tests" / "engine_digest.py"
MATCHES = 96  # per variant and option set: 16 sets × 96 matches × 2 dealer turns = 3,072 deals at least


def start(pure: bool, *args: str) -> subprocess.Popen[str]:
    env = {k: v for k, v in os.environ.items() if k != "ARENA_PURE_PYTHON"}
    if pure:
        env["ARENA_PURE_PYTHON"] = "1"
    return subprocess.Popen([sys.executable, str(DIGEST), *args], env=env, stdout=subprocess.PIPE, text=True)


def output(process: subprocess.Popen[str]) -> list[str]:
    out, _ = process.communicate(timeout=300)
    assert process.returncode == 0
    return out.splitlines()


def test_pure_switch_loads_the_sources() -> None:
    """ARENA_PURE_PYTHON=1 runs the .py files, whatever is installed beside them."""
    code = (
        "import arena.engine, arena.engine.state as s, arena.protocol as p;"
        "print(arena.engine.BUILD, s.__file__, p.__file__)"
    )
    env = {**os.environ, "ARENA_PURE_PYTHON": "1"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    build, state, protocol = out.stdout.split()
    assert (build, Path(state)) == ("pure", Path(arena.engine.__file__).with_name("state.py"))
    assert Path(protocol) == Path(arena.engine.__file__).parent.with_name("protocol.py")


def test_compiled_and_pure_builds_agree() -> None:
    # The pure build is the slower one: its matches are split between two processes (the second
    # starts at seed MATCHES // 2), so that both cores stay busy once the compiled build is done.
    half = MATCHES // 2
    compiled = start(False, str(MATCHES))
    pure = [start(True, str(half)), start(True, str(MATCHES - half), str(half))]
    compiled_lines = output(compiled)
    pure_parts = [output(process) for process in pure]
    assert [part[0] for part in pure_parts] == ["pure", "pure"]
    if compiled_lines[0] != "compiled":
        # CI has a compiler (.ci/apt-packages): there the compiled build must be there to compare.
        assert os.environ.get("CI") != "true", "CI installed the pure engine: the mypyc build failed"
        pytest.skip(
            "no compiled engine installed (no C compiler at `pip install -e .`, or ARENA_PURE_PYTHON=1)"
        )
    deals = sum(int(line.split()[-2]) for line in compiled_lines[1:])
    assert deals >= 3_000

    def match_of(line: str) -> str:  # variant, options and seed: all but deals and digest
        return line.rsplit(" ", 2)[0]

    pure_lines = {match_of(line): line for part in pure_parts for line in part[1:]}
    assert len(pure_lines) == len(compiled_lines) - 1  # the two halves: every match once
    for mine in compiled_lines[1:]:
        theirs = pure_lines.get(match_of(mine))
        assert mine == theirs, f"the builds disagree on a match (variant options seed deals digest): {mine}"


def test_compiled_modules_older_than_their_source_are_found(tmp_path: Path) -> None:
    """An engine module edited since the last `pip install -e .` must not run as its old compiled code."""
    from importlib.machinery import EXTENSION_SUFFIXES

    from arena import stale_extensions

    package = tmp_path / "arena"
    (package / "engine").mkdir(parents=True)
    for name in ("state", "play"):
        (package / "engine" / f"{name}.py").write_text("")
        (package / "engine" / f"{name}{EXTENSION_SUFFIXES[0]}").write_bytes(b"")
    assert stale_extensions(str(package)) == []
    source = package / "engine" / "play.py"
    os.utime(source, (source.stat().st_atime, source.stat().st_mtime + 10))
    assert stale_extensions(str(package)) == [os.path.join("arena", "engine", "play.py")]
