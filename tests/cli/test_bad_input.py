"""Mistakes a user makes on the command line, through real subprocesses: each ends with the exit
status README.md's table gives and one line naming the cause, never a traceback or a raw errno.

The classes (issue 32): addresses without a port or with a bad one (the arena's options and the
Python SDK's, which share one rule), ports out of range, paths to write that cannot be written
(checked before any work), files of the wrong kind (what the file is and which command reads it),
numbers out of range, unknown options (the subcommand's usage), commands that would change
nothing (not a success), and a bot that cannot start (`arena play` stops at once)."""

from __future__ import annotations

import inspect
import json
import os
import shutil
import socket
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest
from support import ROOT, SDK

from arena.cli import common

NOPE = "/proc/nope"  # a folder that cannot be made, even by root


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]  # `arena` arguments; {X} names a file of the scratch folder
    status: int
    needles: tuple[str, ...]  # in the line naming the cause, case-insensitive
    sdk: bool = False  # a bot of the Python SDK instead of `arena`


def case(status: int, text: str, *needles: str, sdk: bool = False) -> Case:
    return Case(tuple(text.split()), status, needles, sdk)


AB = "ladder ab heuristic random --against random random --max-deal-sets 1"
SERVE = "serve --port 0 --store {dir}/arena.db --operator-token-file {dir}/token"

CASES: dict[str, Case] = {
    # ports
    "serve port too big": case(2, "serve --port 99999", "--port", "65535", "99999"),
    "serve port negative": case(2, "serve --port -1", "--port", "-1"),
    "serve port not a number": case(2, "serve --port abc", "--port", "whole number"),
    "serve port superscript digit": case(2, "serve --port ²", "--port", "whole number"),
    "serve host with a port": case(2, "serve --host 127.0.0.1:5000", "--host", "--port"),
    # addresses
    "http without port": case(2, "serve --http 127.0.0.1", "--http", "no port"),
    "http port too big": case(2, "serve --http 127.0.0.1:99999", "--http", "99999"),
    "http without host": case(2, "serve --http :8080", "--http", "no host"),
    "advertise without port": case(2, "serve --advertise 127.0.0.1", "--advertise", "no port"),
    "advertise port not a number": case(2, "serve --advertise 127.0.0.1:abc", "'abc' is not a number"),
    "advertise ipv6 without brackets": case(2, "serve --advertise ::1:50051", "brackets"),
    "ray without port": case(2, f"{AB} --ray 127.0.0.1", "--ray", "no port"),
    "sdk address without port": case(2, "--address 127.0.0.1 --token t", "'127.0.0.1'", "no port", sdk=True),
    "sdk port not a number": case(2, "--address 127.0.0.1:abc --token t", "'abc' is not a number", sdk=True),
    "sdk port zero": case(2, "--address localhost:0 --token t", "port 0", sdk=True),
    "sdk lobby address without port": case(
        2, "--address 127.0.0.1:5,localhost --bot-token t", "'localhost'", "no port", sdk=True
    ),
    # numbers
    "play negative bank": case(2, "play --variant grosstarock --bank-ms -5", "--bank-ms", "-5"),
    "play no deals": case(2, "play --variant grosstarock --deals 0", "--deals"),
    "show negative seat": case(2, "replay show {dir}/match.jsonl --seat -1", "--seat"),
    "conformance zero time": case(2, "conformance --bot random --per-decision-ms 0", "--per-decision-ms"),
    "ab negative bank": case(2, f"{AB} --bank-ms -1", "--bank-ms"),
    # paths to write
    "serve replay dir cannot be made": case(1, SERVE + f" --replay-dir {NOPE}", "--replay-dir", NOPE),
    "serve replay dir is a file": case(
        1, SERVE + " --replay-dir {dir}/plain.txt", "--replay-dir", "is a file"
    ),
    "play replay dir cannot be made": case(
        1, f"play --variant grosstarock --replay-dir {NOPE}", "--replay-dir"
    ),
    "simulate records is a file": case(
        1, "simulate --variant danish --deals 1 --seed 1 --records {dir}/plain.txt", "--records", "is a file"
    ),
    "html output folder missing": case(
        1, f"replay html {{dir}}/match.jsonl -o {NOPE}/page.html", "--output", "no such folder"
    ),
    "html output is a folder": case(1, "replay html {dir}/match.jsonl -o {dir}", "--output", "is a folder"),
    "analysis output folder missing": case(
        1, f"replay analyze {{dir}}/match.jsonl -o {NOPE}/a.json", "--output", NOPE
    ),
    "ladder database folder missing": case(
        1, f"ladder run {{dir}}/ladder.toml --db {NOPE}/l.sqlite", "--db", "no such folder"
    ),
    "ladder report output is a file": case(
        1, "ladder report {dir}/ladder.sqlite -o {dir}/plain.txt", "--output", "is a file"
    ),
    "ab replay dir cannot be made": case(1, f"{AB} --replay-dir {NOPE}", "--replay-dir", NOPE),
    "conformance log dir is a file": case(
        1, "conformance --bot random --variant danish --log-dir {dir}/plain.txt", "--log-dir", "is a file"
    ),
    "bots store folder missing": case(1, f"bots register alpha --store {NOPE}/a.db", NOPE),
    # files of the wrong kind
    "score a replay log": case(
        1, "score {dir}/match.jsonl", "is a replay log, not a deal record", "arena replay"
    ),
    "score a folder": case(1, "score {dir}", "is a directory, not a deal record"),
    "verify a deal record": case(1, "replay verify {dir}/deal.json", "deal record", "arena score"),
    "analysis is a replay log": case(
        1,
        "replay html {dir}/match.jsonl --analysis {dir}/match.jsonl -o {dir}/page.html",
        "--analysis",
        "is a replay log, not an analysis file",
    ),
    "ladder run a replay log": case(1, "ladder run {dir}/match.jsonl", "is a replay log, not a ladder file"),
    "ladder run the arena's settings": case(
        1, "ladder run {dir}/arena.toml", "is the standing arena's settings", "arena serve --arena-config"
    ),
    "score a ladder file": case(
        1, "score {dir}/ladder.toml", "is a ladder file, not a deal record", "ladder run"
    ),
    "ladder run an arena store as db": case(
        1,
        "ladder run {dir}/ladder.toml --db {dir}/arena.db",
        "--db",
        "is an arena store, not a ladder database",
    ),
    "standings of a replay log": case(
        1, "ladder standings {dir}/match.jsonl", "replay log", "ladder database"
    ),
    "standings of an arena store": case(1, "ladder standings {dir}/arena.db", "is an arena store"),
    "standings of a folder": case(1, "ladder standings {dir}", "is a directory, not a ladder database"),
    "bots on a ladder database": case(
        1, "bots list --store {dir}/ladder.sqlite", "--store", "is a ladder database, not an arena store"
    ),
    "serve on a ladder database": case(
        1,
        "serve --port 0 --operator-token-file {dir}/token --store {dir}/ladder.sqlite",
        "is a ladder database",
    ),
    "serve settings are a replay log": case(
        1, SERVE + " --arena-config {dir}/match.jsonl", "--arena-config", "is a replay log"
    ),
    # unknown options, and commands that would change nothing
    "analyze has no --deal": case(2, "replay analyze {dir}/match.jsonl --deal 0", "unrecognized", "--deal 0"),
    "resume a revoked bot": case(1, "bots resume gone --store {dir}/arena.db", "gone is revoked", "nothing"),
    "revoke a revoked bot": case(1, "bots revoke gone --store {dir}/arena.db", "revoked already"),
    "resume a bot that is not paused": case(1, "bots resume alpha --store {dir}/arena.db", "not paused"),
    # bots that cannot start
    "play an empty bot command": case(2, "play --variant grosstarock --bot ''", "--bot", "empty command"),
    "play a bot that does not exist": case(
        3, "play --variant grosstarock --replay-dir {dir}/m --bot no-such-bot-x", "no such program", "stopped"
    ),
}


@pytest.fixture(scope="module")
def scratch(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A replay log, a deal record, a ladder file and its database, an arena store with an active
    bot (alpha) and a revoked one (gone), and a plain text file."""
    folder = tmp_path_factory.mktemp("bad-input")
    shutil.copy(ROOT / "replays" / "samples" / "danish.jsonl", folder / "match.jsonl")
    (folder / "deal.json").write_text(json.dumps({"format": "arena-deal", "variant": "danish"}) + "\n")
    (folder / "plain.txt").write_text("just text\n")
    (folder / "arena.toml").write_text("[arena]\nmax_matches_per_bot = 2\n")
    shutil.copy(ROOT / "ladders" / "example.toml", folder / "ladder.toml")
    with sqlite3.connect(folder / "ladder.sqlite") as db:
        db.execute("CREATE TABLE ladder (id INTEGER PRIMARY KEY, schema_version INTEGER)")
    db.close()
    for args in (("register", "alpha"), ("register", "gone"), ("revoke", "gone")):
        done = run_arena(("bots", *args, "--store", str(folder / "arena.db")), folder)
        assert done.returncode == 0, done.stderr
    return folder


def run_arena(argv: tuple[str, ...], cwd: Path, sdk: bool = False) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(SDK), os.environ.get("PYTHONPATH", "")]))
    head = [sys.executable, "-m", "arena_bot.random_bot"] if sdk else [sys.executable, "-m", "arena"]
    return subprocess.run(
        [*head, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


@pytest.fixture(scope="module")
def outcomes(scratch: Path) -> dict[str, subprocess.CompletedProcess[str]]:
    """Every case run once, two at a time (each is a Python process starting up)."""

    def run(item: tuple[str, Case]) -> tuple[str, subprocess.CompletedProcess[str]]:
        name, bad = item
        argv = tuple(word.replace("{dir}", str(scratch)).replace("''", "") for word in bad.argv)
        return name, run_arena(argv, scratch, bad.sdk)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(run, CASES.items()))


def test_there_are_enough_cases() -> None:
    assert len(CASES) >= 40


@pytest.mark.parametrize("name", list(CASES))
def test_bad_input_is_one_line_naming_the_cause(
    name: str, outcomes: dict[str, subprocess.CompletedProcess[str]]
) -> None:
    bad, done = CASES[name], outcomes[name]
    assert done.returncode == bad.status, (done.returncode, done.stderr[-2000:])
    assert "Traceback" not in done.stderr and "Errno" not in done.stderr, done.stderr
    lines = done.stderr.splitlines()
    if bad.status == 2 and not bad.sdk:  # argparse: the subcommand's usage, then the one line
        assert lines[0].startswith(f"usage: arena {bad.argv[0]}"), done.stderr
        line = lines[-1]
        assert ": error: " in line
    else:
        assert len(lines) == 1, done.stderr
        line = lines[0]
        prefix = "random: " if bad.sdk else f"arena {bad.argv[0]}"
        assert line.startswith(prefix), line
    for needle in bad.needles:
        assert needle.lower() in line.lower(), (needle, line)


def test_a_refused_address_costs_no_retrying(scratch: Path) -> None:
    """Without a port the SDK would dial 443 and retry for its whole reconnect time."""
    started = time.monotonic()
    done = run_arena(
        ("--address", "127.0.0.1", "--token", "t", "--reconnect-seconds", "30"), scratch, sdk=True
    )
    assert done.returncode == 2 and time.monotonic() - started < 15


def test_a_server_that_cannot_listen_leaves_no_token_file(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = str(taken.getsockname()[1])
        token = tmp_path / "operator-token"
        done = run_arena(
            ("serve", "--port", port, "--store", str(tmp_path / "a.db"), "--operator-token-file", str(token)),
            tmp_path,
        )
    assert done.returncode == 1 and "in use" in done.stderr.splitlines()[-1], done.stderr
    assert not token.exists()
    # an existing token file is the operator's: a failed start keeps it
    token.write_text("gto_kept\n")
    done = run_arena(
        ("serve", "--port", "0", "--store", str(tmp_path), "--operator-token-file", str(token)), tmp_path
    )
    assert done.returncode == 1 and token.read_text() == "gto_kept\n"


# --------------------------------------------------------------------------- one rule for addresses

ADDRESSES: dict[str, bool] = {
    "127.0.0.1:50051": True,
    "localhost:1": True,
    "[::1]:65535": True,
    "grpc://arena.example:7470": True,
    "grpcs://arena.example:443": True,
    "tls://arena.example:443": True,
    "unix:/run/arena.sock": True,
    "unix:///run/arena.sock": True,
    "127.0.0.1": False,
    "127.0.0.1:": False,
    "127.0.0.1:abc": False,
    "127.0.0.1:0": False,
    "127.0.0.1:65536": False,
    "127.0.0.1:²": False,
    "127.0.0.1:-1": False,
    ":50051": False,
    "::1:50051": False,
    "[::1]": False,
    "[::1:50051": False,
    "unix:": False,
    "": False,
    " 127.0.0.1:50051": False,
    "host name:50051": False,
    "grpc://": False,
    "https://arena.example": False,
    "arena.example:50051/play": False,
}


@pytest.fixture(scope="module")
def sdk_address() -> Iterator[object]:
    sys.path.insert(0, str(SDK))
    try:
        from arena_bot import address

        yield address
    finally:
        sys.path.remove(str(SDK))


def test_the_sdk_and_the_command_line_have_one_address_rule(sdk_address: object) -> None:
    ours, theirs = common.address_problem, sdk_address.address_problem  # type: ignore[attr-defined]
    assert inspect.getsource(ours) == inspect.getsource(theirs)
    for name in ("SCHEMES", "PORT_MAX", "ADDRESS_HELP"):
        assert getattr(common, name) == getattr(sdk_address, name), name


@pytest.mark.parametrize(("text", "good"), list(ADDRESSES.items()))
def test_an_address_needs_a_port(text: str, good: bool, sdk_address: object) -> None:
    for rule in (common.address_problem, sdk_address.address_problem):  # type: ignore[attr-defined]
        problem = rule(text)
        assert (problem is None) == good, (text, problem)
    if not good:
        with pytest.raises(ValueError, match="expected HOST:PORT"):
            sdk_address.check_address(text)  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("text", "free", "fixed"),
    [
        ("0", 0, None),
        ("1", 1, 1),
        ("65535", 65535, 65535),
        ("65536", None, None),
        ("-1", None, None),
        ("٣", None, None),
        ("1_000", None, None),
        (" 80", None, None),
        ("9" * 4301, None, None),
    ],
)
def test_ports(text: str, free: int | None, fixed: int | None) -> None:
    import argparse

    for parse, want in ((common.listen_port, free), (common.port, fixed)):
        if want is None:
            with pytest.raises(argparse.ArgumentTypeError):
                parse(text)
        else:
            assert parse(text) == want


def test_an_unterminated_string_in_a_replay_says_where_once(scratch: Path) -> None:
    lines = (scratch / "match.jsonl").read_text().splitlines(keepends=True)
    broken = scratch / "broken.jsonl"
    broken.write_text("".join(lines[:5]) + '{"type": "action", "seat": "0\n' + "".join(lines[6:]))
    done = run_arena(("replay", "verify", str(broken)), scratch)
    assert done.returncode == 1
    line = done.stderr.splitlines()[-1]
    assert "Unterminated string starting at column" in line and "at at" not in line, line


def test_every_option_of_every_command_says_what_it_is() -> None:
    import argparse

    from arena.cli import build_parser

    silent: list[str] = []

    def walk(parser: argparse.ArgumentParser, name: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for word, sub in action.choices.items():
                    walk(sub, f"{name} {word}")
            elif not isinstance(action, argparse._HelpAction) and not action.help:
                silent.append(f"{name} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser(), "arena")
    assert not silent
