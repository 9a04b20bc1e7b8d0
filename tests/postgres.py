"""A real PostgreSQL server for tests, started from Debian's packages (`postgresql`).

Fixtures (registered in tests/conftest.py):

- ``postgres_server`` (session): the running server (`PostgresServer`: ``port``,
  ``url(database)``, ``bindir``, ``root``); most tests want one of the two below.
- ``postgres_url`` (session): the URL of a database ``arena_test`` on a server that this
  module starts once per test session, e.g. ``postgresql://arena@127.0.0.1:PORT/arena_test``.
- ``postgres_db`` (function): the URL of a fresh, empty database on that server, dropped
  after the test, so that tests never see each other's tables.

The server (`benchmarks.postgres.PostgresServer`, which `python -m benchmarks arena --servers N`
uses too) is a throwaway cluster: ``initdb`` into a temporary directory, trust
authentication for the user ``arena``, listening only on 127.0.0.1 on a free port with its
unix socket in that directory, fsync off. It is stopped and its directory removed at the
end of the session, whatever the tests did.

The binaries are looked for on PATH and in /usr/lib/postgresql/*/bin, where Debian puts
them (not on PATH). PostgreSQL refuses to run as root: as root the server's files belong
to the ``postgres`` user, which Debian's package creates, and the server runs as that user.

Where the server cannot start (no binaries, no psycopg, a failing initdb...) the tests
that use it skip, saying exactly why; with CI set to a non-empty value they fail instead,
since CI installs PostgreSQL (.ci/apt-packages) and must run them.
"""

from __future__ import annotations

import os
import subprocess
import uuid
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, NoReturn

import pytest

from benchmarks.postgres import (
    PostgresServer,
    PostgresUnavailable,
    candidate_dirs,
    find_bindir,
    free_port,
)

if TYPE_CHECKING:
    import psycopg

__all__ = ["PostgresServer", "PostgresUnavailable", "candidate_dirs", "find_bindir", "free_port"]

DATABASE = "arena_test"


def unavailable(reason: str) -> NoReturn:
    """Skip on a developer's machine; with CI set, fail: CI must run these tests."""
    message = f"PostgreSQL cannot start here: {reason}"
    if os.environ.get("CI"):
        pytest.fail(f"{message} (CI is set: CI installs PostgreSQL from .ci/apt-packages)", pytrace=False)
    pytest.skip(message)


def _connect(url: str) -> psycopg.Connection[Any]:
    import psycopg

    return psycopg.connect(url, autocommit=True, connect_timeout=10)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    """A PostgreSQL server started for this session, with the database `arena_test`."""
    try:
        import psycopg
    except ImportError as e:
        unavailable(f"psycopg is not installed ({e}); pip install -e '.[dev]'")
    server: PostgresServer | None = None
    reason = ""
    try:
        server = PostgresServer(find_bindir())
        server.start()
        with _connect(server.url("postgres")) as conn:
            conn.execute(f'CREATE DATABASE "{DATABASE}"')
    except (PostgresUnavailable, OSError, subprocess.SubprocessError, psycopg.Error) as e:
        reason = str(e).strip() or repr(e)
    except BaseException:
        if server is not None:
            server.stop()
        raise
    if reason or server is None:
        if server is not None:
            server.stop()
        unavailable(reason)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_url(postgres_server: PostgresServer) -> str:
    """URL of the database `arena_test` on the session's server (shared by all tests)."""
    return postgres_server.url(DATABASE)


@pytest.fixture
def postgres_db(postgres_server: PostgresServer) -> Iterator[str]:
    """URL of a fresh, empty database on the session's server, dropped after the test."""
    name = f"arena_{uuid.uuid4().hex[:16]}"
    with _connect(postgres_server.url("postgres")) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    try:
        yield postgres_server.url(name)
    finally:
        with _connect(postgres_server.url("postgres")) as conn:
            # FORCE: a connection the test left open must not keep its database alive.
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def stop_database(server: PostgresServer) -> None:
    """Stop the server as an operator's `pg_ctl stop -m fast` does: every connection is cut."""
    result = server._run(server.bindir / "pg_ctl", "stop", "-w", "-m", "fast", "-D", server.data)
    assert result.returncode == 0, result.stderr


def start_database(server: PostgresServer) -> None:
    """Start a server `stop_database` stopped, on the same port, with the same data."""
    result = server._run(
        server.bindir / "pg_ctl", "start", "-w", "-t", "30",
        "-D", server.data, "-l", server.log, "-o", f"-p {server.port}",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
