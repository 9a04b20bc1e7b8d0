"""The frozen benchmark (`arena ladder benchmark`): the same bot gets the same number twice, the
pack is checked against the decks it deals, and its mistakes are one clear line.

One deal set of the grosstarock pack (three matches of one deal, the seats rotated) keeps it short:
the random example bot (seeded by its ARENA_BOT_SEED) against the heuristic and the reference
search bot, played through the real referee, once from the command line and once through the API.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from arena.engine import deck_for, find_variant
from arena.ladder.config import bot_from_text
from arena.ladder.frozen import (
    PACK_FILE,
    PackError,
    decks_digest,
    load_pack,
    pack_seeds,
    published,
    published_line,
    run,
)

GROSSTAROCK = find_variant("grosstarock")


def arena(*args: str | Path | int, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena", *map(str, args)], capture_output=True, text=True, timeout=timeout
    )


def test_two_runs_give_the_same_number() -> None:
    proc = arena(
        "ladder", "benchmark", "--bot", "random", "--variant", "grosstarock", "--deal-sets", 1, "--json"
    )
    assert proc.returncode == 0, proc.stderr
    first = json.loads(proc.stdout)
    second = run(GROSSTAROCK, bot_from_text("random"), deal_sets=1).to_dict()
    assert first == second
    assert first["deal_sets"] == 1 and first["deals"] == 3 and first["faults"] == 0
    assert set(first["opponents"]) == {"heuristic", "search"}
    # Zero-sum points at every table: the bot's and the references' points add up to nothing.
    assert first["points_per_deal"] + sum(first["opponents"].values()) == pytest.approx(0, abs=1e-3)
    # The same number on any machine, any day: the published random reference's first deal set,
    # played wherever and whenever this test runs.
    assert first["per_deal_set"] == published("grosstarock")["random"]["per_deal_set"][:1]


def test_every_variant_of_the_pack_has_its_references_published() -> None:
    pack = json.loads(PACK_FILE.read_text(encoding="utf-8"))
    for variant in pack["variants"]:
        scores = published(variant)
        assert set(scores) == {"heuristic", "search", "random"}, variant
        for name, entry in scores.items():
            assert len(entry["per_deal_set"]) == 12 and entry["faults"] == 0, (variant, name)
            mean = sum(entry["per_deal_set"]) / 12
            assert entry["points_per_deal"] == pytest.approx(mean, abs=1e-3), (variant, name)
    line = published_line("grosstarock", deal_sets=1)
    random_first = published("grosstarock")["random"]["per_deal_set"][0]
    assert f"random {random_first:+.1f}" in line and "first 1 deal sets" in line


def test_the_pack_is_what_its_seeds_deal(tmp_path: Path) -> None:
    pack = load_pack(GROSSTAROCK)
    assert pack.version == 1 and len(pack.seeds) == 12 and pack.deals == 1
    assert pack.seeds == pack_seeds("grosstarock", 12)
    assert decks_digest(pack.seeds[:1], 1) != decks_digest(pack.seeds[1:2], 1)
    assert deck_for(pack.seeds[0], 0) != deck_for(pack.seeds[1], 0)
    data = json.loads(PACK_FILE.read_text(encoding="utf-8"))
    data["variants"]["grosstarock"]["seeds"][3] += 1  # a pack whose decks are not the frozen ones
    changed = tmp_path / "pack.json"
    changed.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(PackError, match="no longer deal the decks frozen in the pack"):
        load_pack(GROSSTAROCK, changed)
    del data["variants"]["danish"]
    changed.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(PackError, match="the benchmark pack v1 has no danish"):
        load_pack(find_variant("danish"), changed)
    proc = arena("ladder", "benchmark", "--bot", "random", "--variant", "nope")
    assert proc.returncode == 2 and "unknown variant 'nope'" in proc.stderr, proc.stderr
