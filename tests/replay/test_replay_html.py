"""`arena replay html` in a real headless Chromium, driven over the DevTools protocol.

The browser is Debian's `chromium` (CI installs it from .ci/apt-packages). It is started with
`--remote-debugging-pipe`: DevTools messages are NUL-terminated JSON on its file descriptors 3
(in) and 4 (out), so no port and no client library are needed. Where no Chromium is installed the
tests skip, saying so; with CI=true they fail instead.

Every page is opened under its own Content-Security-Policy (a <meta> element: inline style and
script by hash only), and a test fails if the browser reports a violation of it or a dialog
(a script of a bot's name that ran). Bot names and seat labels full of markup (`<!--<script>`,
`</script>`, U+2028) are shown as text and leave the viewer working.
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
import trio
from support import BOTS
from support.browser import Browser, csp_problems
from support.table import LAYOUT

from arena.engine import Card, DealState, find_variant
from arena.referee.runner import MatchConfig
from arena.referee.seat import TimeControl
from arena.replay.html import PAGE_CSP, render_html, script_json
from arena.replay.read import Replay
from arena.replay.samples import SAMPLES_DIR
from arena.replay.table import action_label
from arena.replay.timeline import clocks
from arena.replay.verify import verify_replay
from arena.server.local import EXAMPLE_BOTS, play_matches

SCRIPTED = BOTS / "scripted_bot.py"
SYMBOLS = {"♠": "S", "♥": "H", "♦": "D", "♣": "C"}
# A Hello's bot name is free text: this one once made the HTML parser read the page's code as data.
HOSTILE = "<!--<script>alert(1)</script>"
HOSTILE_LABELS = ["<!--<script>", "</script><script>alert(2)</script>", "a\u2028b\u2029 &amp; <b>c</b>"]


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> tuple[Replay, Path]:
    """A real grosstarock match in which seat 1 only ever answers illegally, and its page."""
    directory = tmp_path_factory.mktemp("html")
    behaviour = shlex.quote(f"illegal-always,name:{HOSTILE}")
    bots = [
        EXAMPLE_BOTS["heuristic"],
        f"env BEHAVIOUR={behaviour} {shlex.quote(sys.executable)} {shlex.quote(str(SCRIPTED))}",
        EXAMPLE_BOTS["random"],
    ]
    variant = find_variant("grosstarock")
    config = MatchConfig(variant, 1, 21, ("heuristic", "illegal", "random"), TimeControl(2_000, 3_000, 0))
    [played] = trio.run(play_matches, [(config, bots)], directory)
    assert played.runner.replay_path is not None
    page = directory / "match.html"
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "replay", "html", str(played.runner.replay_path), "-o", str(page)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    return verify_replay(played.runner.replay_path, collect=True), page


def state_before(replay: Replay, deal: int, step: int) -> DealState:
    log = replay.deal(deal)
    assert replay.variant is not None
    state = DealState(replay.variant, log.dealer, log.deck, pots=log.pots, stakes=log.stakes)
    for decision in log.decisions[:step]:
        state.apply(decision.action)
    return state


def hand(seat: int) -> str:
    """The selector of a seat's drawn hand (in its box, or below the table for the viewing seat)."""
    return f'[data-hand="{seat}"]'


def seat_box(seat: int) -> str:
    return f"document.querySelector('#table [data-seat=\"{seat}\"]')"


def cards_on_page(browser: Browser, selector: str) -> list[str]:
    query = f"document.querySelectorAll({json.dumps(selector + ' [data-card]')})"
    return list(browser.js(f"[...{query}].map(e => e.dataset.card)"))


def text_cards(text: str) -> set[str]:
    """Cards named in text outside the drawn cards: ♠K, ♥10, T21, EX."""
    found = {SYMBOLS[s] + r for s, r in re.findall(r"([♠♥♦♣])(10|[2-9AJCQK])(?![0-9])", text)}
    found |= {f"T{n}" for n in re.findall(r"\bT(2[01]|1[0-9]|[1-9])(?![0-9])", text)}
    if re.search(r"\bEX\b", text):
        found.add("EX")
    return found


def where(browser: Browser) -> str:
    return str(browser.js("document.getElementById('where').textContent"))


def test_the_page_steps_through_decisions_and_shows_each_one(
    browser: Browser, faulty: tuple[Replay, Path], tmp_path: Path
) -> None:
    replay, page = faulty
    decisions = replay.deals[0].decisions
    decision = next(d for d in decisions if d.seat == 1 and d.action.type == "play" and d.step > 20)
    step = decision.step
    browser.open(f"{page.as_uri()}#deal=0&step={step}&seat=all")
    last = len(decisions)
    assert where(browser) == f"deal 0 · decision {step} of {last}"
    assert (
        browser.js(seat_box(1) + ".querySelector('.tc-detail').textContent") == f"{HOSTILE} (no version)"
    )  # as text
    state = state_before(replay, 0, step)
    for seat in range(3):  # every hand, as the engine has it at this decision
        assert sorted(cards_on_page(browser, hand(seat))) == sorted(str(c) for c in state.hands[seat])
    on_table = state.trick or list(state.tricks[-1].plays)  # the trick so far, or the one just won
    assert cards_on_page(browser, "#table .tc-trick") == [str(c) for _, c in on_table]
    clock = clocks(replay)[0, step]
    assert (
        browser.js("document.getElementById('answer').textContent")
        == f"played {action_label(decision.action)}"
    )
    think = browser.js("document.getElementById('think').textContent")
    assert think == f"think {decision.think_ms} ms of {clock.limit_ms} ms (2000 + bank {clock.bank_ms})"
    assert decision.fault is not None
    fault = browser.js("document.getElementById('fault').textContent")
    assert fault.startswith("illegal fault: 3 invalid answers")
    offered = browser.js("[...document.querySelectorAll('#offered .opt')].map(e => e.textContent)")
    assert offered == [action_label(a) for a in state.legal_actions()]
    shot = tmp_path / "decision.png"
    browser.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000

    browser.key("ArrowRight", "ArrowRight", 39)
    browser.key("ArrowRight", "ArrowRight", 39)
    assert where(browser) == f"deal 0 · decision {step + 2} of {last}"
    assert browser.js("location.hash") == f"#deal=0&step={step + 2}&seat=all"
    browser.key("ArrowLeft", "ArrowLeft", 37)
    assert where(browser) == f"deal 0 · decision {step + 1} of {last}"
    browser.click("#next")
    assert where(browser) == f"deal 0 · decision {step + 2} of {last}"
    browser.click("#prev")
    browser.click("#prev")
    assert where(browser) == f"deal 0 · decision {step} of {last}"
    browser.key("End", "End", 35)
    assert where(browser) == f"deal 0 · end of {last}"
    assert browser.js("document.getElementById('next').disabled") is True
    final = [
        str(x) for x in browser.js("[...document.querySelectorAll('#scores tr')].map(r => r.textContent)")
    ]
    assert any(row.startswith("deltas") for row in final)
    browser.key("Home", "Home", 36)
    assert where(browser) == f"deal 0 · decision 0 of {last}"
    assert all(url.startswith("file:") for url in browser.requests()), browser.requests()


def test_a_seat_view_shows_no_hidden_card(
    browser: Browser, faulty: tuple[Replay, Path], tmp_path: Path
) -> None:
    replay, page = faulty
    log = replay.deals[0]
    step = next(d.step for d in log.decisions if d.seat == 2 and d.action.type == "play" and d.step > 30)
    browser.open(f"{page.as_uri()}#deal=0&step={step}&seat=2")
    assert "seat 2 · " in browser.js(seat_box(2) + ".textContent")
    assert browser.js("location.hash") == f"#deal=0&step={step}&seat=2"
    start = state_before(replay, 0, 0)
    now = state_before(replay, 0, step)
    played = {str(d.action.card) for d in log.decisions[: step + 1] if d.action.type == "play"}
    allowed = {str(c) for c in start.hands[2]} | played
    drawn = cards_on_page(browser, "body")
    assert sorted(cards_on_page(browser, hand(2))) == sorted(str(c) for c in now.hands[2])
    for other in (0, 1):
        assert cards_on_page(browser, hand(other)) == []
        backs = browser.js(f"document.querySelectorAll({json.dumps(hand(other) + ' .tc-back')}).length")
        assert backs == len(now.hands[other])
    words = browser.js(
        "(() => { const b = document.body.cloneNode(true);"
        " b.querySelectorAll('script, .tc-card').forEach(e => e.remove()); return b.innerText; })()"
    )
    seen = set(drawn) | text_cards(words)
    assert seen <= allowed, f"seat 2 is shown {sorted(seen - allowed)}"
    hidden = {str(c) for c in now.hands[0]} | {str(c) for c in now.hands[1]}
    browser.key("a", "KeyA", 65)  # every hand again: the hidden cards are on the page now
    assert hidden <= set(cards_on_page(browser, "body"))
    browser.key("1", "Digit1", 49)
    assert browser.js("location.hash") == f"#deal=0&step={step}&seat=1"
    assert cards_on_page(browser, hand(2)) == []
    browser.screenshot(tmp_path / "seat-1.png")


@pytest.mark.parametrize("name", ["german-1754-4p", "american"])
def test_four_seats(browser: Browser, tmp_path: Path, name: str) -> None:
    sample = SAMPLES_DIR / f"{name}.jsonl"
    page = tmp_path / "four.html"
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "replay", "html", str(sample), "-o", str(page)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    replay = verify_replay(sample, collect=True)
    step = 10
    browser.open(f"{page.as_uri()}#deal=0&step={step}")
    state = state_before(replay, 0, step)
    assert browser.js("document.querySelectorAll('#table .tc-seat').length") == 4
    out = state.sitting_out
    if out is not None:  # german-1754 with four seats: the one opposite the dealer sits out
        assert browser.js(seat_box(out) + ".classList.contains('tc-out')") is True
    assert browser.js("document.querySelectorAll('#table .tc-seat.tc-out').length") == (
        0 if out is None else 1
    )
    for seat in range(4):
        assert sorted(cards_on_page(browser, hand(seat))) == sorted(str(c) for c in state.hands[seat])
    places = browser.js("[...document.querySelectorAll('#table .tc-seat')].map(e => e.className)")
    assert {re.findall(r"\btc-(bottom|left|top|right)\b", p)[0] for p in places} == {
        "bottom",
        "left",
        "top",
        "right",
    }
    browser.screenshot(tmp_path / f"{name}.png")


def test_a_page_of_a_damaged_replay_says_where_it_stops(browser: Browser, tmp_path: Path) -> None:
    lines = (SAMPLES_DIR / "danish.jsonl").read_text().splitlines(keepends=True)
    index = [i for i, line in enumerate(lines) if '"type":"action"' in line][100]
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(lines[:index]) + "{oops\n" + "".join(lines[index + 1 :]))
    page = tmp_path / "broken.html"
    proc = subprocess.run(
        [sys.executable, "-m", "arena", "replay", "html", str(broken), "-o", str(page)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "drawn up to the problem" in proc.stderr
    browser.open(page.as_uri())
    banner = browser.js("document.getElementById('banner').textContent")
    assert f"line {index + 1} is not valid JSON" in banner
    browser.key("PageDown", "PageDown", 34)
    browser.key("End", "End", 35)
    assert browser.js("document.getElementById('decision').textContent").endswith("the log stops here")


def _hostile_sample(tmp_path: Path) -> Path:
    """A sample replay whose seat labels are full of markup."""
    lines = (SAMPLES_DIR / "grosstarock.jsonl").read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["seats"] = HOSTILE_LABELS
    hostile = tmp_path / "hostile.jsonl"
    hostile.write_text(json.dumps(header) + "\n" + "".join(lines[1:]))
    return hostile


def test_script_json_escapes_what_changes_how_a_script_is_read() -> None:
    data = {"names": [*HOSTILE_LABELS, HOSTILE, "</SCRIPT >", "<!-- -->", "]]>"], "n": [1, 2.5, None]}
    text = script_json(data)
    assert json.loads(text) == data
    for character in "<>&\u2028\u2029":
        assert character not in text
    assert "\\u003c!--\\u003cscript\\u003e" in text


def test_markup_in_seat_labels_is_text_and_the_viewer_works(browser: Browser, tmp_path: Path) -> None:
    page = tmp_path / "hostile.html"
    page.write_text(render_html(verify_replay(_hostile_sample(tmp_path), collect=True)))
    browser.open(f"{page.as_uri()}#deal=0&step=5")
    assert browser.js("document.querySelectorAll('#table .tc-seat').length") == 3
    decisions = len(verify_replay(SAMPLES_DIR / "grosstarock.jsonl", collect=True).deals[0].decisions)
    assert where(browser) == f"deal 0 · decision 5 of {decisions}"
    names = browser.js("[...document.querySelectorAll('#table .tc-seat .tc-name')].map(e => e.textContent)")
    assert names == HOSTILE_LABELS
    assert browser.js("document.querySelectorAll('script').length") == 2  # the data and the code, no more
    assert browser.js("document.title").startswith("grosstarock · match ")
    browser.key("ArrowRight", "ArrowRight", 39)
    assert where(browser).startswith("deal 0 · decision 6 of ")
    assert (
        browser.js("document.querySelectorAll('#timeline .bar').length") > 0
    )  # styled by CSSOM, not an attribute


def test_the_page_carries_a_policy_that_allows_its_own_inline_code_only(tmp_path: Path) -> None:
    text = render_html(verify_replay(_hostile_sample(tmp_path), collect=True))
    meta = re.search(r'<meta http-equiv="Content-Security-Policy" content="([^"]*)">', text)
    assert meta is not None and html.unescape(meta.group(1)) == PAGE_CSP
    assert text.index("Content-Security-Policy") < text.index("<style>") < text.index("<script")
    # The policy's hashes are those of the page's one style and one code script, as sent.
    style = text.split("<style>", 1)[1].split("</style>", 1)[0]
    code = text.split("<script>", 1)[1].split("</script>", 1)[0]
    for directive, inline in (("style-src", style), ("script-src", code)):
        digest = base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}'" in PAGE_CSP
    # No other script, no style or event-handler attribute in the markup (they would need 'unsafe-inline').
    markup = re.sub(r"<script.*?</script>|<style>.*?</style>", "", text, flags=re.S)
    assert text.count("<script") == 2
    assert re.search(r"<[^>]*\s(on[a-z]+|style)\s*=", markup) is None
    assert "unsafe" not in PAGE_CSP and "default-src 'none'" in PAGE_CSP


def test_a_violation_of_the_policy_is_caught(chromium: Browser, tmp_path: Path) -> None:
    """The check the other tests rely on: an inline script or style the policy does not allow,
    added to a page, is reported (and the page's own code still runs)."""
    good = render_html(verify_replay(SAMPLES_DIR / "grosstarock.jsonl", collect=True))
    bad = tmp_path / "bad.html"
    bad.write_text(
        good.replace("<body>", '<body><p style="color:red">x</p><script>window.injected = 1;</script>')
    )
    chromium.events.clear()
    chromium.open(bad.as_uri())
    problems = csp_problems(chromium)
    assert any("script-src" in p for p in problems) and any("style-src" in p for p in problems), problems
    assert chromium.js("window.injected === undefined") is True
    assert chromium.js("document.querySelectorAll('#table .tc-seat').length") == 3


WIDE = {"width": 1280, "height": 1000, "deviceScaleFactor": 1, "mobile": False}


def test_every_variant_is_drawn_and_fits_a_phone(browser: Browser, tmp_path: Path) -> None:
    """Each sample (every variant) at a phone's width, every hand and one seat's view: the table
    draws its seats and cards, and nothing reaches outside the screen (the timeline scrolls)."""
    phone = {"width": 375, "height": 740, "deviceScaleFactor": 2, "mobile": True}
    browser.call("Emulation.setDeviceMetricsOverride", phone, session=True)
    try:
        for sample in sorted(SAMPLES_DIR.glob("*.jsonl")):
            replay = verify_replay(sample, collect=True)
            assert replay.variant is not None
            page = tmp_path / f"{sample.stem}.html"
            page.write_text(render_html(replay))
            for view in ("all", "1"):
                browser.open(f"{page.as_uri()}#deal=0&step=12&seat={view}")
                where = (sample.stem, view)
                assert browser.js("document.querySelectorAll('#table .tc-seat').length") == replay.seats, (
                    where
                )
                state = state_before(replay, 0, 12)
                mine = sorted(cards_on_page(browser, hand(1)))
                assert mine == sorted(str(c) for c in state.hands[1]), where
                layout = browser.js(f"({LAYOUT})()")
                assert layout["scrollWidth"] <= phone["width"] and not layout["outside"], (where, layout)
        # The 78 cards, each its own picture with its index in the corner (the Fool's star).
        cards = browser.js(
            "ArenaCards.ALL.map(c => { const f = ArenaCards.face(c);"
            " return [c, f.getAttribute('aria-label'), f.querySelector('text').textContent]; })"
        )
        assert [code for code, _, _ in cards] == [str(Card(i)) for i in range(78)]
        assert len({label for _, label, _ in cards}) == 78
        for code, _, index in cards:
            assert index == ("★" if code == "EX" else code[1:]), (code, index)
        shots = os.environ.get("ARENA_WEB_SCREENSHOTS")
        if shots:  # docs/REPLAYS.md shows the viewer, on a phone and on a wide screen
            page = tmp_path / "american.html"
            for name, size in (("replay-phone", {**phone, "height": 1500}), ("replay", WIDE)):
                browser.call("Emulation.setDeviceMetricsOverride", size, session=True)
                browser.open(f"{page.as_uri()}#deal=0&step=41&seat=all")
                browser.screenshot(Path(shots) / f"{name}.png")
    finally:
        browser.call("Emulation.clearDeviceMetricsOverride", {}, session=True)
