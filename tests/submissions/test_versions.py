"""A bot's versions in the store, on SQLite and on PostgreSQL (arena/standing/versions.py): one
version per distinct code, the states' order, one active version a bot, claims of builds."""

from __future__ import annotations

import pytest

from arena.standing.store import Store, StoreError, UnknownBotError
from arena.standing.versions import UnknownVersionError, Versions

MANIFEST = {"language": "python", "entry": "bot.py", "persistent": True}


def test_versions_move_through_their_states(any_store: Store) -> None:
    any_store.register_bot("ann")
    versions = Versions(any_store)
    first, created = versions.submit("ann", "d1", MANIFEST, b"one")
    assert (first.version, first.state, created) == (1, "building", True)
    again, created = versions.submit("ann", "d1", MANIFEST, b"one")
    assert (again.version, created) == (1, False)  # the same code is the same version
    second, _ = versions.submit("ann", "d2", MANIFEST, b"two")
    assert second.version == 2
    assert versions.archive("d2") == b"two"

    claimed = versions.claim("worker-a")
    assert claimed is not None and claimed.version == 1
    assert versions.claim("worker-b") is not None  # version 2: each is claimed once
    assert versions.claim("worker-c") is None
    versions.built("ann", 1, b"tree-1", "t1", "build: exited")
    assert versions.version("ann", 1).state == "testing"
    versions.activate("ann", 1, "21 cases: 21 passed")
    versions.built("ann", 2, b"tree-2", "t2", "build: exited")
    versions.activate("ann", 2, "21 cases: 21 passed")
    assert [(v.version, v.state) for v in versions.versions("ann")] == [(1, "retired"), (2, "active")]
    assert [(v.bot, v.version, v.build_digest) for v in versions.active()] == [("ann", 2, "t2")]

    disabled = versions.disable("ann", 2, "")
    assert (disabled.state, disabled.reason) == ("disabled", "disabled by the operator")
    assert versions.active() == []
    # A disabled version's code submitted again is a new version.
    assert versions.submit("ann", "d2", MANIFEST, b"two")[0].version == 3


def test_a_rejected_version_keeps_its_reason_and_a_dead_workers_claim_is_taken_again(
    any_store: Store,
) -> None:
    any_store.register_bot("bob")
    versions = Versions(any_store)
    versions.submit("bob", "d1", MANIFEST, b"one")
    assert versions.claim("dead") is not None
    assert versions.claim("alive") is None
    again = versions.claim("alive", stale_ms=-1)  # its claim is older than the limit
    assert again is not None and (again.version, again.state) == (1, "building")
    versions.reject("bob", 1, "build: wall time: still running after 300 s of wall time", "log")
    rejected = versions.version("bob", 1)
    assert (rejected.state, rejected.reason, rejected.report) == (
        "rejected",
        "build: wall time: still running after 300 s of wall time",
        "log",
    )
    versions.activate("bob", 1, "")  # a rejected version never becomes active
    assert versions.version("bob", 1).state == "rejected"


def test_unknown_bots_versions_and_oversized_archives_are_refused(any_store: Store) -> None:
    versions = Versions(any_store)
    with pytest.raises(UnknownBotError):
        versions.submit("nobody", "d", MANIFEST, b"x")
    any_store.register_bot("cid")
    with pytest.raises(UnknownVersionError, match="bot 'cid' has no version 7"):
        versions.version("cid", 7)
    with pytest.raises(StoreError, match="the limit is 16777216"):
        versions.submit("cid", "big", MANIFEST, b"x" * (16 * 1024 * 1024 + 1))
