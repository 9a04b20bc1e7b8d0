"""The PostgreSQL fixtures of tests/postgres.py give a real, working server.

Skipped with the reason where PostgreSQL cannot start; with CI set they fail instead.
"""

from __future__ import annotations

import psycopg
import pytest
from postgres import PostgresServer


def test_server_is_real_postgresql(postgres_url: str) -> None:
    assert postgres_url.startswith("postgresql://arena@127.0.0.1:")
    assert postgres_url.endswith("/arena_test")
    with psycopg.connect(postgres_url) as conn:
        row = conn.execute("SELECT version(), current_database(), current_user").fetchone()
    assert row is not None
    version, database, user = row
    assert "PostgreSQL" in version
    assert (database, user) == ("arena_test", "arena")


def test_tables_rows_and_transactions(postgres_db: str) -> None:
    with psycopg.connect(postgres_db) as conn:
        conn.execute("CREATE TABLE games (id serial PRIMARY KEY, variant text NOT NULL, score int)")
        conn.execute(
            "INSERT INTO games (variant, score) VALUES (%s, %s), (%s, %s)",
            ("grosstarock", 12, "danish", -3),
        )
        conn.commit()
        with pytest.raises(psycopg.errors.NotNullViolation):
            conn.execute("INSERT INTO games (variant) VALUES (NULL)")
        conn.rollback()
        rows = conn.execute("SELECT variant, score FROM games ORDER BY id").fetchall()
    assert rows == [("grosstarock", 12), ("danish", -3)]
    # Committed: a second connection sees the rows, and text round-trips as UTF-8.
    with psycopg.connect(postgres_db) as conn:
        text = "Gro\u00dftarock \u2212 \u2026"
        row = conn.execute("SELECT (SELECT count(*) FROM games), %s::text", (text,)).fetchone()
    assert row == (2, text)


def test_each_test_database_is_fresh_and_isolated(postgres_server: PostgresServer, postgres_db: str) -> None:
    other = postgres_server.url("arena_test")
    assert postgres_db != other
    with psycopg.connect(postgres_db) as conn:
        # Empty: the table of the previous test was in another database.
        tables = conn.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchone()
        assert tables == (0,)
        conn.execute("CREATE TABLE only_here (x int)")
    with psycopg.connect(other) as conn:
        missing = conn.execute("SELECT to_regclass('public.only_here')").fetchone()
    assert missing == (None,)


def test_server_listens_only_on_loopback(postgres_server: PostgresServer) -> None:
    with psycopg.connect(postgres_server.url("postgres")) as conn:
        row = conn.execute(
            "SELECT current_setting('listen_addresses'), current_setting('fsync'), inet_server_addr()"
        ).fetchone()
    assert row is not None
    assert row[:2] == ("127.0.0.1", "off")
    assert str(row[2]) == "127.0.0.1"
