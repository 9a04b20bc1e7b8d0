"""A store that cannot be opened keeps nothing open: no connection, and no SQLite owner lock."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest

from arena.standing.store import SCHEMA_VERSION, Store, StoreError


def _connections(url: str) -> int:
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid()"
        ).fetchone()
    assert row is not None
    return int(row[0])


def test_a_refused_postgresql_store_closes_its_connection(postgres_db: str) -> None:
    Store(postgres_db).close()
    with psycopg.connect(postgres_db) as conn:
        conn.execute("UPDATE arena_schema SET version = 99")
    before = _connections(postgres_db)
    for _ in range(3):
        with pytest.raises(StoreError, match="newer arena"):
            Store(postgres_db)
    assert _connections(postgres_db) == before


def test_a_refused_sqlite_store_releases_its_owner_lock(tmp_path: Path) -> None:
    path = tmp_path / "arena.db"
    Store(str(path)).close()
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE arena_schema SET version = 99")
    with pytest.raises(StoreError, match="newer arena"):
        Store(str(path))
    with sqlite3.connect(path) as conn:
        conn.execute("UPDATE arena_schema SET version = ?", (SCHEMA_VERSION,))
    reopened = Store(str(path))  # opens: the refused one left no lock behind
    reopened.close()
