"""Fixtures shared by the test modules."""

# A real PostgreSQL server for the store's tests: see tests/postgres.py.
from postgres import postgres_db, postgres_server, postgres_url

__all__ = ["postgres_db", "postgres_server", "postgres_url"]
