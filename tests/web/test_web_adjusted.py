"""The luck-adjusted points beside the raw ones, everywhere the standings are shown: the JSON API,
`AdminService.GetStandings`, the leaderboard, a bot's page and `arena standings` (docs/ARENA.md,
"Luck taken out of the ratings").

One real server (`arena serve --http`, the command itself) on a real SQLite store that already
holds two rated matches, recorded as the arena records them (`summarise` reads the replay,
`Store.finish_match` rates it): the referee's Danish sample (two deals, an adjusted variant) and
its American sample (rated on raw points). Bot "d" played only the American match.
"""

from __future__ import annotations

import contextlib
import json
import shutil
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from support import arena
from support.admin import admin_channel
from support.browser import CSP_LISTENER
from support.site import served_site

from arena.standing.pending import PendingRecord
from arena.standing.results import summarise
from arena.standing.store import Store
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

SAMPLES = Path(__file__).resolve().parents[2] / "replays" / "samples"
OPERATOR = "adjusted-test-operator"
CONFIG = """[arena]
variants = ["danish", "american"]
deals = 1
"""
MATCHES = {"danish": ["a", "b", "c"], "american": ["a", "b", "c", "d"]}


def record(store: Store, replays: Path, variant: str, bots: list[str]) -> None:
    """Rate the sample match of `variant` as the arena rates a finished match of its own."""
    path = Path(shutil.copy(SAMPLES / f"{variant}.jsonl", replays / f"{variant}.jsonl"))
    lines = [json.loads(text) for text in path.read_text().splitlines()]
    end = lines[-1]
    pending = PendingRecord(
        match_id=f"m-{variant}",
        kind="result",
        variant=variant,
        bots=bots,
        ended_ms=1_700_000_000_000,
        replay=path.name,
        termination=end["termination"],
        forfeited=end["forfeited"],
        scores=[int(s) for s in end["scores"]],
    )
    store.start_match(pending.match_id, variant, seed=1, deals=lines[0]["deals"], bots=bots)
    result, rate = summarise(pending, replays)
    store.finish_match(result, pause_after=3, pause_ms=1000, rate=rate)


@dataclass
class Site:
    url: str
    grpc: str
    store: Path  # the server's SQLite store


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Site]:
    directory = tmp_path_factory.mktemp("adjusted")
    (directory / "replays").mkdir()
    (directory / "arena.toml").write_text(CONFIG)
    (directory / "operator").write_text(OPERATOR + "\n")
    with contextlib.closing(Store(str(directory / "arena.db"))) as store:
        for name in ("a", "b", "c", "d"):
            store.register_bot(name)
        for variant, bots in MATCHES.items():
            record(store, directory / "replays", variant, bots)
    options = (
        "--arena-config",
        str(directory / "arena.toml"),
        "--operator-token-file",
        str(directory / "operator"),
    )
    with served_site(directory, *options) as served:
        yield Site(served.url, served.grpc, directory / "arena.db")


def api(site: Site, path: str) -> Any:
    with urllib.request.urlopen(site.url + path, timeout=10) as response:
        return json.loads(response.read())


def get_standings(site: Site) -> list[pb.Standing]:
    with admin_channel(site.grpc, OPERATOR) as channel:
        admin = pb_grpc.AdminServiceStub(channel)
        return list(admin.GetStandings(pb.GetStandingsRequest(recent=1), timeout=10).standings)


def test_get_standings_carries_the_adjusted_mean_of_the_json_api_and_unset_where_raw(site: Site) -> None:
    rows = {(r["bot"], r["variant"]): r for r in api(site, "/api/standings")["standings"]}
    standings = get_standings(site)
    assert {(s.bot, s.variant) for s in standings} == set(rows) and len(rows) == 7
    for standing in standings:
        row = rows[standing.bot, standing.variant]
        assert round(standing.mean_score_per_deal, 3) == row["mean_score_per_deal"]  # raw, as before
        assert standing.adjusted_deals == row["adjusted_deals"]
        [recent] = standing.recent
        if standing.variant == "danish":
            assert standing.HasField("mean_adjusted_score_per_deal")
            assert round(standing.mean_adjusted_score_per_deal, 3) == row["mean_adjusted_score_per_deal"]
            assert standing.adjusted_deals == standing.deals == 2
            # the cards' luck was taken out: the adjusted mean is not the raw one
            assert abs(standing.mean_adjusted_score_per_deal - standing.mean_score_per_deal) > 0.5
            assert len(recent.adjusted_scores) == 3
            seat = recent.seat
            assert recent.adjusted_scores[seat] == pytest.approx(standing.mean_adjusted_score_per_deal * 2)
            assert recent.scores[seat] == standing.mean_score_per_deal * 2
        else:  # american: rated on raw points, so "not adjusted" (unset), never a 0
            assert not standing.HasField("mean_adjusted_score_per_deal")
            assert row["mean_adjusted_score_per_deal"] is None
            assert standing.adjusted_deals == 0
            assert list(recent.adjusted_scores) == []
            assert len(recent.scores) == 4


def cells(page: Any, table: Any, header: str) -> dict[str, str]:
    """Each row's bot (first link) and its text in the column headed `header`."""
    headers = table.locator("thead th").all_text_contents()
    column = next(i for i, text in enumerate(headers) if text.startswith(header)) + 1
    rows = table.locator("tbody tr")
    return {
        rows.nth(i).locator("a").first.text_content(): rows.nth(i)
        .locator(f"td:nth-child({column})")
        .text_content()
        for i in range(rows.count())
    }


def open_page(browser: Any, url: str, ready: str) -> Any:
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    context.add_init_script(CSP_LISTENER)
    page = context.new_page()
    page.goto(url)
    page.wait_for_selector(ready)
    return page


def test_the_leaderboard_and_the_bot_pages_show_raw_and_adjusted_points(
    site: Site, playwright_chromium: Any
) -> None:
    rows = {(r["bot"], r["variant"]): r for r in api(site, "/api/standings")["standings"]}
    page = open_page(playwright_chromium, site.url + "/", "#board table")
    try:
        titles = page.locator("#board h2").all_text_contents()
        tables = dict(zip(titles, page.locator("#board table").all(), strict=True))
        assert set(tables) == {"american", "danish"}
        for variant, table in tables.items():
            raw = cells(page, table, "Raw pts/deal")
            adjusted = cells(page, table, "Luck-adjusted pts/deal")
            assert set(raw) == set(adjusted) == {b for b, v in rows if v == variant}
            for bot in raw:
                row = rows[bot, variant]
                assert raw[bot] == f"{row['mean_score_per_deal']:.2f}"
                if variant == "danish":
                    assert adjusted[bot] == f"{row['mean_adjusted_score_per_deal']:.2f}"
                else:
                    assert adjusted[bot] == "not adjusted"
        assert "luck of the cards" in page.locator("#points-note").text_content()
        for name, expected in (
            ("a", {"danish": "number", "american": "not adjusted"}),
            ("d", {"american": "not adjusted"}),
        ):
            page.goto(f"{site.url}/bots/{name}")
            page.wait_for_selector("#bot table")
            ratings = page.locator("#bot table").first
            headers = ratings.locator("thead th").all_text_contents()
            column = next(i for i, text in enumerate(headers) if text.startswith("Luck-adjusted")) + 1
            shown = {
                row.locator("td:nth-child(1)").text_content(): row.locator(
                    f"td:nth-child({column})"
                ).text_content()
                for row in ratings.locator("tbody tr").all()
            }
            assert set(shown) == set(expected)
            for variant, what in expected.items():
                if what == "number":
                    assert shown[variant] == f"{rows[name, variant]['mean_adjusted_score_per_deal']:.2f}"
                else:
                    assert shown[variant] == what
        assert page.evaluate("window.__csp") == []
    finally:
        page.context.close()


def test_arena_standings_prints_both_columns_and_not_adjusted_where_raw(site: Site) -> None:
    rows = {(r["bot"], r["variant"]): r for r in api(site, "/api/standings")["standings"]}
    done = arena("standings", "--store", site.store, "--recent", "1")
    assert done.returncode == 0, done.stderr
    variant = ""
    seen = set()
    for line in done.stdout.splitlines():
        words = line.split()
        if line and not line.startswith(" "):
            variant = line.strip()
        elif words and words[0] == "#":
            assert words[6:8] == ["score/deal", "adjusted/deal"]
        elif words and words[0].isdigit():
            row = rows[words[1], variant]
            assert words[6] == f"{row['mean_score_per_deal']:.2f}"
            adjusted = row["mean_adjusted_score_per_deal"]
            assert words[7:9] == (["not", "adjusted"] if adjusted is None else [f"{adjusted:.2f}", words[8]])
            seen.add((words[1], variant))
    assert seen == set(rows)
