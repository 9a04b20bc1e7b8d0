"""Submitted bots end to end, through real processes (docs/SUBMIT.md): the Python, Node and C++
example bots submitted with `arena bot submit`, built and tested in the sandbox by two `arena serve
--hosted` servers sharing one PostgreSQL, active, and playing rated matches on both servers; a new
version replacing the old between matches without losing a result; a build that never ends
stopped with a named reason. The C++ build is the slow part: it happens once per module."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import tarfile
import uuid
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
import trio
from support import arena, free_port
from support.submissions import CPP_SDK, HostedServer, example_submissions, query, wait_for

from arena.sandbox import Limits, unavailable
from arena.standing.store import Store
from arena.standing.versions import Versions
from arena.submissions.accept import Builder
from arena.submissions.archive import ArchiveError, from_bytes, read_submission
from arena.submissions.build import Toolchain
from arena.submissions.manifest import ManifestError
from arena.submissions.processes import RuntimeConfig
from arena.submissions.submit import submit, versions

LANGUAGES = ("cpp", "python", "node")  # submitted in this order: the slow build first


def need_sandbox() -> None:
    why = unavailable()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"sandboxes cannot run here: {why}")
        pytest.skip(f"sandboxes cannot run here: {why}")


@pytest.fixture(scope="module")
def database(postgres_server: Any) -> Iterator[str]:
    name = f"arena_{uuid.uuid4().hex[:16]}"
    with psycopg.connect(postgres_server.url("postgres"), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield postgres_server.url(name)
    finally:
        with psycopg.connect(postgres_server.url("postgres"), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(scope="module")
def hosted(database: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Two hosted servers on one PostgreSQL, the three example bots registered and submitted."""
    need_sandbox()
    directory = tmp_path_factory.mktemp("hosted")
    store = Store(database)
    tokens = {lang: store.register_bot(f"hosted-{lang}", ["grosstarock"])[1] for lang in LANGUAGES}
    store.close()
    servers = [HostedServer(directory / f"server{i}", database, free_port()) for i in range(2)]
    try:
        for server in servers:
            server.start()
        for server in servers:
            server.wait_listening()
        submissions = example_submissions(directory / "submissions")
        submitting = {}
        for lang in LANGUAGES:  # at once; the Node bot over the API, the others into the store
            where = ("--server", f"127.0.0.1:{servers[0].port}") if lang == "node" else ("--store", database)
            command = [sys.executable, "-m", "arena", "bot", "submit", str(submissions[lang])]
            submitting[lang] = subprocess.Popen(
                [*command, "--token", tokens[lang], *where],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
        submitted = {lang: (p.wait(120), *p.communicate()) for lang, p in submitting.items()}
        yield {
            "url": database,
            "tokens": tokens,
            "servers": servers,
            "submitted": submitted,
            "dirs": submissions,
        }
    finally:
        for server in servers:
            server.stop()


def states(url: str) -> dict[tuple[str, int], str]:
    return {
        (bot, int(v)): state for bot, v, state in query(url, "SELECT bot, version, state FROM bot_versions")
    }


def finished_matches(url: str) -> list[tuple[str, str, list[str]]]:
    """(match_id, server_id, bots by seat) of every finished match."""
    rows = query(
        url,
        "SELECT m.match_id, m.server_id, s.bot FROM matches m JOIN match_seats s ON s.match_id = m.match_id "
        "WHERE m.state = 'finished' ORDER BY m.match_id, s.seat",
    )
    out: dict[str, tuple[str, list[str]]] = {}
    for match_id, server_id, bot in rows:
        out.setdefault(match_id, (server_id, []))[1].append(bot)
    return [(m, server, bots) for m, (server, bots) in out.items()]


def test_examples_are_built_tested_active_and_rated_on_two_servers(hosted: dict[str, Any]) -> None:
    url, tokens = hosted["url"], hosted["tokens"]
    for lang in LANGUAGES:
        status, out, err = hosted["submitted"][lang]
        assert status == 0, err
        assert out.strip() == f"hosted-{lang} version 1: building"
    again = arena("bot", "submit", hosted["dirs"]["python"], "--token", tokens["python"], "--store", url)
    line = again.stdout.strip()  # its state may have moved on meanwhile
    assert line.startswith("hosted-python version 1: ") and line.endswith(" (the same code)"), line

    wanted = {(f"hosted-{lang}", 1) for lang in LANGUAGES}

    def all_settled() -> bool:
        now = states(url)
        return all(now.get(key) in ("active", "rejected") for key in wanted)

    wait_for(all_settled, 240, "the three versions to be built and tested")
    listed = arena("bot", "versions", "--token", tokens["cpp"], "--store", url, "--json")
    assert listed.returncode == 0, listed.stderr
    [cpp] = json.loads(listed.stdout)["versions"]
    assert (cpp["state"], cpp["language"], cpp["reason"]) == ("active", "cpp", "")
    api = ("--server", f"127.0.0.1:{hosted['servers'][1].port}")
    [node] = json.loads(arena("bot", "versions", "--token", tokens["node"], *api, "--json").stdout)[
        "versions"
    ]
    assert (node["bot"], node["state"], node["language"]) == ("hosted-node", "active", "node")
    refused = arena("bot", "versions", "--token", "gta_not-a-token", *api)
    assert refused.returncode == 1
    assert refused.stderr.strip().endswith("no bot registered in this arena has this token")
    for lang in LANGUAGES:
        report = json.loads(
            arena("bot", "report", "1", "--token", tokens[lang], "--store", url, "--json").stdout
        )
        assert report["state"] == "active", report["report"][-3000:]
        assert "21 cases: 21 passed, 0 failed" in report["report"]
    # Each version was built once, by one of the servers.
    builds = [e for server in hosted["servers"] for e in server.event("building")]
    assert Counter((e["bot"], e["version"]) for e in builds) == Counter(wanted)

    # Rated matches of the three hosted bots, on both servers.
    def played_on_both() -> list[Any]:
        matches = finished_matches(url)
        return matches if len({server for _m, server, _b in matches}) == 2 else []

    matches = wait_for(played_on_both, 90, "finished matches on both servers")
    assert all(sorted(bots) == [f"hosted-{lang}" for lang in sorted(LANGUAGES)] for _m, _s, bots in matches)
    # Their clocks charged the CPU their sandboxes used.
    for server in hosted["servers"]:
        replay = next((server.directory / "replays").glob("*.jsonl"))
        lines = [json.loads(line) for line in replay.read_text().splitlines()]
        assert lines[0]["cpu_clock"]["seats"] == [0, 1, 2]
        assert all("cpu_ms" in line for line in lines if line["type"] == "action")
    seats = query(url, "SELECT match_id, bot, version FROM hosted_seats")
    recorded = {(m, bot): v for m, bot, v in seats}
    for match_id, _server, bots in matches:
        assert all(recorded.get((match_id, bot)) == 1 for bot in bots), (match_id, seats)
    # What a hosted bot printed in a match is its owner's to read, and only its owner's.
    match_id = matches[0][0]
    sql = "SELECT output FROM hosted_seats WHERE match_id = ? AND bot = 'hosted-cpp'"
    wait_for(lambda: query(url, sql, (match_id,))[0][0], 30, "the C++ bot's output in the store")
    printed = arena("bot", "output", match_id, "--token", tokens["cpp"], "--store", url)
    assert printed.returncode == 0, printed.stderr
    assert printed.stdout.startswith("--- hosted-cpp version 1, seat ")
    assert "random-cpp: completed" in printed.stdout
    others = arena("bot", "output", match_id, "--token", tokens["python"], "--store", url).stdout
    assert others.startswith("--- hosted-python version 1, seat ") and "random-cpp" not in others
    standings = arena("standings", "--store", url, "--json")
    rated = {s["bot"]: s["hosted_version"] for s in json.loads(standings.stdout)["standings"]}
    assert rated == {f"hosted-{lang}": 1 for lang in LANGUAGES}
    table = arena("standings", "--store", url).stdout
    assert all(f"hosted-{lang}" in table for lang in LANGUAGES) and "hosted, version 1" in table


def test_a_new_version_replaces_the_old_between_matches(hosted: dict[str, Any], tmp_path: Path) -> None:
    url, tokens = hosted["url"], hosted["tokens"]
    wait_for(lambda: states(url).get(("hosted-python", 1)) == "active", 240, "version 1 of the Python bot")
    newer = tmp_path / "python2"
    newer.mkdir()
    for path in hosted["dirs"]["python"].iterdir():
        (newer / path.name).write_bytes(path.read_bytes())
    (newer / "bot.py").write_text("# version 2\nfrom arena_bot.random_bot import run\n\nrun()\n")
    result = arena("bot", "submit", newer, "--token", tokens["python"], "--store", url)
    assert result.stdout.strip() == "hosted-python version 2: building", result.stderr
    wait_for(lambda: states(url).get(("hosted-python", 2)) == "active", 120, "version 2 to be active")
    assert states(url)[("hosted-python", 1)] == "retired"

    def played_by_v2() -> bool:
        finished = {m for m, _s, _b in finished_matches(url)}
        rows = query(url, "SELECT match_id FROM hosted_seats WHERE bot = 'hosted-python' AND version = 2")
        return any(m in finished for (m,) in rows)

    wait_for(played_by_v2, 60, "a finished match of version 2")
    replaced = [e for server in hosted["servers"] for e in server.event("a new version replaces the old")]
    assert {(e["old"], e["new"]) for e in replaced} == {(1, 2)}
    # No result lost: no match aborted, and every bot's rating counts each of its finished matches.
    assert query(url, "SELECT COUNT(*) FROM matches WHERE state = 'aborted'") == [(0,)]
    counted = query(  # one statement: one snapshot of the ratings and the recorded matches
        url,
        "SELECT r.bot, r.matches, (SELECT COUNT(*) FROM match_seats s JOIN matches m "
        "ON m.match_id = s.match_id WHERE s.bot = r.bot AND m.state = 'finished') "
        "FROM ratings r WHERE r.variant = 'grosstarock'",
    )
    assert len(counted) == 3 and all(rated == finished for _bot, rated, finished in counted), counted

    # The operator disables the active version: the servers stop hosting the bot, between matches.
    disabled = arena("bot", "disable", "hosted-python", "2", "--reason", "cheating", "--store", url)
    assert disabled.returncode == 0, disabled.stderr

    def let_go() -> bool:
        return all(server.event("hosted bot no longer active") for server in hosted["servers"])

    wait_for(let_go, 30, "both servers to stop hosting the disabled version")
    listed = arena("bot", "versions", "--token", tokens["python"], "--store", url, "--json")
    assert [(v["state"], v["reason"]) for v in json.loads(listed.stdout)["versions"]] == [
        ("retired", ""),
        ("disabled", "cheating"),
    ]
    assert query(url, "SELECT COUNT(*) FROM matches WHERE state = 'aborted'") == [(0,)]


# A C++ source whose compilation takes minutes: a constant expression of some 10^10 steps, each loop
# under the compiler's own loop limit.
ENDLESS_CPP = """\
constexpr long spin() {
  long total = 0;
  for (long i = 0; i < 200000; ++i)
    for (long j = 0; j < 200000; ++j) total += i ^ j;
  return total;
}
static_assert(spin() != 1);
int main() { return 0; }
"""


def test_a_build_that_never_ends_is_stopped_with_a_named_reason(tmp_path: Path) -> None:
    need_sandbox()
    source = tmp_path / "endless"
    source.mkdir()
    (source / "arena-bot.toml").write_text('language = "cpp"\nentry = "endless"\n')
    (source / "bot.cpp").write_text(ENDLESS_CPP)
    store = Store(str(tmp_path / "arena.db"))
    try:
        _bot, token = store.register_bot("endless")
        submitted, _ = submit(store, token, source)
        limits = Limits(memory_bytes=512 * 1024 * 1024, pids=32, scratch_bytes=64 * 1024 * 1024, wall_s=2.0)
        toolchain = Toolchain(limits=limits, cpp_sdk=CPP_SDK if CPP_SDK.is_dir() else Path())
        builder = Builder(Versions(store), RuntimeConfig(tmp_path / "work", toolchain), "test")
        assert trio.run(builder.one)
        _name, [version] = versions(store, token)  # what the owner reads (`arena bot versions`)
    finally:
        store.close()
    assert (version.version, version.state) == (submitted.version, "rejected")
    assert version.reason == "build: wall time: still running after 2 s of wall time"


def test_a_submission_is_content_addressed_and_bad_ones_are_refused(tmp_path: Path) -> None:
    bots = example_submissions(tmp_path / "bots")
    from_dir = read_submission(bots["python"])
    packed = io.BytesIO()
    with tarfile.open(fileobj=packed, mode="w:gz") as tar:
        tar.add(bots["python"], arcname=".")
    assert from_bytes(packed.getvalue()).digest == from_dir.digest  # the same code, however sent
    (bots["python"] / "bot.py").write_text("from arena_bot.random_bot import run\nrun()\n")
    assert read_submission(bots["python"]).digest != from_dir.digest
    (bots["python"] / "arena-bot.toml").write_text('language = "rust"\nentry = "bot.py"\n')
    with pytest.raises(ManifestError, match="language must be one of python, node, cpp, exe"):
        read_submission(bots["python"])
    (bots["node"] / "arena-bot.toml").write_text('language = "node"\nentry = "missing.js"\n')
    with pytest.raises(ManifestError, match=r"entry 'missing\.js' is not in the submission"):
        read_submission(bots["node"])
    (bots["cpp"] / "link").symlink_to("/etc/passwd")
    with pytest.raises(ArchiveError, match="symbolic links are not allowed"):
        read_submission(bots["cpp"])
