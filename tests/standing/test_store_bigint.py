"""The store's score columns hold 64 bits on PostgreSQL too (a Danish score outgrows 32)."""

from __future__ import annotations

import psycopg

from arena.standing.store import SCHEMA_VERSION, Store


def _score_types(url: str) -> dict[str, str]:
    with psycopg.connect(url) as conn:
        rows = conn.execute(
            "SELECT table_name, data_type FROM information_schema.columns WHERE column_name = 'score'"
        ).fetchall()
    return dict(rows)


def test_a_schema_3_store_on_postgresql_migrates_its_seat_scores_to_bigint(postgres_db: str) -> None:
    Store(postgres_db).close()
    assert _score_types(postgres_db) == {"match_seats": "bigint", "ratings": "bigint"}
    with psycopg.connect(postgres_db) as conn:  # as a schema 3 store left it
        conn.execute("ALTER TABLE match_seats ALTER COLUMN score TYPE INTEGER")
        conn.execute("UPDATE arena_schema SET version = 3")
    assert _score_types(postgres_db)["match_seats"] == "integer"
    store = Store(postgres_db)
    with store.transaction() as db:
        assert db.execute("SELECT version FROM arena_schema").fetchone()[0] == SCHEMA_VERSION >= 4
    store.close()
    assert _score_types(postgres_db) == {"match_seats": "bigint", "ratings": "bigint"}
