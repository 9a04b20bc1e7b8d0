"""The name and version a bot gives in Hello, recorded with its results: in a ladder's database
(and its standings and report), and in the standing arena's store (SQLite and PostgreSQL) and
`arena standings`."""

from __future__ import annotations

import contextlib
import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

from support import arena, wait_for
from support.ladder import HEURISTIC, RANDOM, ladder_file
from support.standing import FAST, ServerThread

from arena.ladder.config import load_ladder
from arena.ladder.store import Store as LadderStore
from arena.server.local import bot_environment
from arena.standing.store import SCHEMA_VERSION, MatchResult, SeatResult, Store

# A ladder bot that says in Hello the version written in the VERSION file beside it, so the
# version can change between two runs of one ladder (the ladder file, and so its identity, stays).
VERSIONED_BOT = """
from pathlib import Path
from arena_bot.random_bot import decide
from arena_bot.sdk import main
main(decide, name="versioned", version=(Path(__file__).parent / "VERSION").read_text().strip())
"""
VERSIONED = '[[bots]]\nname = "mine"\ncommand = "{python} versioned.py"\n'

# A standing-arena bot: the SDK's lobby client, saying BOT_VERSION in every Hello.
LOBBY_BOT = """
import json, os, random
from arena_bot import run_lobby
rng = random.Random(0)
result = run_lobby(
    lambda request: rng.choice(list(request.legal_actions)),
    version=os.environ["BOT_VERSION"],
    matches=int(os.environ["MATCHES"]),
    pause_policy="stop",
)
print(json.dumps({"matches": [m.termination for m in result.matches]}), flush=True)
"""


# --------------------------------------------------------------------------- the ladder


def hellos(db: Path) -> list[tuple[int, int, str, str, str]]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT match_seq, seat, bot, name, version FROM hellos ORDER BY 1, 2").fetchall()
    finally:
        conn.close()


def test_a_ladder_records_each_seats_hello_and_shows_the_latest_and_a_changed_version(
    tmp_path: Path,
) -> None:
    (tmp_path / "versioned.py").write_text(VERSIONED_BOT)
    (tmp_path / "VERSION").write_text("1.0\n")
    head = "name = 'hello'\nseed = 2\ndeals = 1\nconcurrency = 2\n"
    path = ladder_file(tmp_path, head, HEURISTIC, RANDOM, VERSIONED)
    db = tmp_path / "ladder.sqlite"
    first = arena("ladder", "run", path, "--max-matches", "2", "--no-progress")
    assert first.returncode == 0, first.stderr
    rows = hellos(db)
    # What the SDK's example bots send: their own names (`main(decide, name=...)`), no version.
    said = {(bot, name, version) for _, _, bot, name, version in rows}
    assert said == {("heuristic", "heuristic", ""), ("random", "random", ""), ("mine", "versioned", "1.0")}
    conn = sqlite3.connect(db)
    seats = {
        (seq, seat): bot
        for seq, s in conn.execute("SELECT seq, seats FROM matches")
        for seat, bot in enumerate(json.loads(s))
    }
    conn.close()
    assert len(rows) == 2 * 3 and {(seq, seat): bot for seq, seat, bot, _, _ in rows} == seats

    (tmp_path / "VERSION").write_text("1.1\n")  # the author fixed something; the ladder goes on
    second = arena("ladder", "run", path, "--max-matches", "2", "--no-progress", "--json")
    assert second.returncode == 0, second.stderr
    bots = {bot["name"]: bot for bot in json.loads(second.stdout)["bots"]}
    assert bots["mine"]["hello"] == {"name": "versioned", "version": "1.1", "versions": ["1.0", "1.1"]}
    assert bots["heuristic"]["hello"] == {"name": "heuristic", "version": "", "versions": [""]}
    text = arena("ladder", "standings", db)
    assert text.returncode == 0, text.stderr
    assert "versioned 1.1  (changed over the ladder: 1.0, 1.1)" in text.stdout
    report = arena("ladder", "report", db, "-o", tmp_path / "report")
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report" / "index.html").read_text()
    assert "versioned 1.1" in page and "changed over the ladder: 1.0, 1.1" in page


def test_a_ladder_file_from_before_hellos_is_read_and_then_gains_the_table(tmp_path: Path) -> None:
    path = ladder_file(
        tmp_path, "seed = 1\ndeals = 1\n", HEURISTIC, RANDOM, RANDOM.replace('"random"', '"r2"', 1)
    )
    db = tmp_path / "ladder.sqlite"
    assert arena("ladder", "run", path, "--max-matches", "1", "--no-progress").returncode == 0
    conn = sqlite3.connect(db)
    conn.execute("DROP TABLE hellos")  # as an older arena left it
    conn.commit()
    conn.close()
    old = tmp_path / "old.sqlite"
    shutil.copy(db, old)
    standings = arena("ladder", "standings", old, "--json")
    assert standings.returncode == 0, standings.stderr
    assert {bot["hello"] for bot in json.loads(standings.stdout)["bots"]} == {None}
    report = arena("ladder", "report", old, "-o", tmp_path / "report")
    assert report.returncode == 0, report.stderr
    # A run opens it and creates the table; its earlier match keeps no hello rows.
    config = load_ladder(path)
    LadderStore.open(db, config.name, config.identity(), config.bots).close()
    assert hellos(db) == []
    assert arena("ladder", "run", path, "--max-matches", "1", "--no-progress").returncode == 0
    assert {seq for seq, *_ in hellos(db)} == {2}


# --------------------------------------------------------------------------- the standing store


def finish(store: Store, match_id: str, said: list[tuple[str, str] | None]) -> None:
    bots = ["ann", "bob", "cid"]
    store.start_match(match_id, "grosstarock", 1, 1, bots)
    seats = [SeatResult(bot, 0, 1, 10, 0, hello=hello) for bot, hello in zip(bots, said, strict=True)]
    ratings = {bot: (25.0, 8.0) for bot in bots}
    store.finish_match(
        MatchResult(match_id, "grosstarock", "completed", f"{match_id}.jsonl", seats, ratings), 3, 1000
    )


def test_the_store_keeps_each_seats_hello_and_the_standings_show_the_latest(any_store: Store) -> None:
    for name in ("ann", "bob", "cid"):
        any_store.register_bot(name)
    finish(any_store, "m1", [("ann", "1.0"), ("bob", "0.9"), None])
    finish(any_store, "m2", [("ann", "1.1"), None, ("cid-dev", "")])
    table = {s.bot: s for s in any_store.standings("grosstarock")}
    assert (table["ann"].hello_name, table["ann"].hello_version) == ("ann", "1.1")  # the latest
    assert (table["bob"].hello_name, table["bob"].hello_version) == ("bob", "0.9")  # no Hello since
    assert (table["cid"].hello_name, table["cid"].hello_version) == ("cid-dev", "")
    assert table["ann"].to_dict()["hello_version"] == "1.1"
    with any_store.transaction() as db:
        stored = db.execute(
            "SELECT match_id, seat, hello_name, hello_version FROM match_seats ORDER BY match_id, seat"
        ).fetchall()
    assert [tuple(row) for row in stored] == [
        ("m1", 0, "ann", "1.0"), ("m1", 1, "bob", "0.9"), ("m1", 2, None, None),
        ("m2", 0, "ann", "1.1"), ("m2", 1, None, None), ("m2", 2, "cid-dev", ""),
    ]  # fmt: skip


def test_a_store_of_schema_1_is_migrated_when_opened(any_store: Store) -> None:
    for name in ("ann", "bob", "cid"):
        any_store.register_bot(name)
    finish(any_store, "before", [("ann", "1.0"), None, None])
    with any_store.transaction() as db:  # back to what schema 1 had
        db.execute("ALTER TABLE match_seats DROP COLUMN hello_name")
        db.execute("ALTER TABLE match_seats DROP COLUMN hello_version")
        db.execute("UPDATE arena_schema SET version = 1")
    with contextlib.closing(Store(any_store.url)) as reopened:
        with reopened.transaction() as db:
            assert db.execute("SELECT version FROM arena_schema").fetchone()[0] == SCHEMA_VERSION
        assert {s.bot: s.hello_version for s in reopened.standings()} == dict.fromkeys(("ann", "bob", "cid"))
        finish(reopened, "after", [("ann", "2.0"), ("bob", "1.0"), None])
        table = {s.bot: s for s in reopened.standings()}
        assert (table["ann"].hello_version, table["bob"].hello_version, table["cid"].hello_version) == (
            "2.0", "1.0", None,
        )  # fmt: skip
        assert table["ann"].matches == 2  # the match from before the migration is still counted


# --------------------------------------------------------------------------- the standing arena


def test_arena_standings_show_the_version_each_bot_said(tmp_path: Path) -> None:
    store = Store(str(tmp_path / "arena.db"))
    try:
        versions = {"ann": "1.0", "bob": "2.0-beta", "cid": ""}
        tokens = {name: store.register_bot(name)[1] for name in versions}
        script = tmp_path / "lobby_bot.py"
        script.write_text(LOBBY_BOT)
        with ServerThread(store, tmp_path / "replays", FAST) as server:
            bots = []
            for name, version in versions.items():
                env = bot_environment(server.address, "", 0)
                del env["ARENA_TOKEN"]
                env.update(ARENA_BOT_TOKEN=tokens[name], BOT_VERSION=version, MATCHES="2")
                bots.append(
                    subprocess.Popen(
                        [sys.executable, str(script)], env=env, stdout=subprocess.PIPE, text=True
                    )
                )
            for bot in bots:
                out, _ = bot.communicate(timeout=120)
                assert bot.returncode == 0
                assert json.loads(out.splitlines()[-1])["matches"] == ["completed", "completed"]

            def all_recorded() -> bool:
                return {s.bot: s.matches for s in store.standings("grosstarock", recent=0)} == dict.fromkeys(
                    versions, 2
                )

            wait_for(all_recorded, 30, "two recorded matches for every bot")
    finally:
        store.close()
    shown = subprocess.run(
        [sys.executable, "-m", "arena", "standings", "--store", str(tmp_path / "arena.db"), "--json"],
        capture_output=True,
        text=True,
        check=True,
    )
    rows = {row["bot"]: row for row in json.loads(shown.stdout)["standings"]}
    assert {bot: (row["hello_name"], row["hello_version"]) for bot, row in rows.items()} == {
        bot: (bot, version) for bot, version in versions.items()
    }
    text = subprocess.run(
        [sys.executable, "-m", "arena", "standings", "--store", str(tmp_path / "arena.db")],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert "version (latest Hello)" in text
    lines = {
        line.split()[1]: line for line in text.splitlines() if line.split()[1:2] in ([b] for b in versions)
    }
    assert lines["ann"].rstrip().endswith("1.0") and lines["bob"].rstrip().endswith("2.0-beta")
    assert lines["cid"].rstrip().endswith("(none)")
