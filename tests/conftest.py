"""Fixtures shared by the test modules."""

from collections.abc import Iterator
from pathlib import Path

import pytest

# A real PostgreSQL server for the store's tests: see tests/postgres.py.
from postgres import postgres_db, postgres_server, postgres_url

from arena.standing.store import Store

__all__ = ["any_store", "postgres_db", "postgres_server", "postgres_url"]


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The standing arena's store on a SQLite file, and on a real PostgreSQL server."""
    url = str(tmp_path / "arena.db") if request.param == "sqlite" else request.getfixturevalue("postgres_db")
    opened = Store(url)
    yield opened
    opened.close()
