"""Fixtures shared by the test modules."""

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest

# A real PostgreSQL server for the store's tests: see tests/postgres.py.
from postgres import postgres_db, postgres_server, postgres_url

from arena.standing.store import Store

__all__ = ["any_store", "postgres_db", "postgres_server", "postgres_url"]

# A shell starts a background job (`pytest &`, `nohup ... &`) with Ctrl-C ignored, and every child
# inherits that: the tests that stop a server or a bot with SIGINT would then wait out their
# timeouts. Ctrl-C is given back its usual meaning, for this process and so for its children.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """The standing arena's store on a SQLite file, and on a real PostgreSQL server."""
    url = str(tmp_path / "arena.db") if request.param == "sqlite" else request.getfixturevalue("postgres_db")
    opened = Store(url)
    yield opened
    opened.close()
