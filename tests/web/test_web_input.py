"""The site refuses bad input plainly and sends its security headers on every answer.

One real site (`serve_site`, as `arena serve --http` runs it, on a real port) over a real SQLite
store, in a thread of the test process; requests are plain HTTP from urllib. Each class of input
is probed by several members: query integers (ASCII digits, a length cap), names and ids that must
match their pattern whole (a trailing newline is not a name), parameters with a closed set of
values, and the headers of every kind of answer (pages, API, static files, errors, a 500, a live
stream). The same rule for names at registration (the store, a ladder's file) and in gRPC
(GetReplay) is checked here too.
"""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import trio
from support.admin import OPERATOR_TOKEN, admin_channel

from arena.engine import VARIANT_NAMES, find_variant
from arena.ladder.config import LadderFileError, parse_ladder
from arena.referee.runner import MatchConfig
from arena.server.app import serve
from arena.standing.store import Store, StoreError
from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc
from arena.web.app import REPLAY_CSP, SITE_CSP, Site, serve_site

NEWLINE_NAMES = ["alpha\n", "alpha\r\n", "alpha%0a", "alpha%0A", "alpha%0d%0a", "alpha%20", "%0aalpha"]


class FailingStore(Store):
    """A store whose standings cannot be read: the site's unexpected error, a 500."""

    def standings(self, variant: str, recent: int = 0) -> Any:
        raise RuntimeError("the standings table is gone")


class SiteThread:
    """The referee (`serve`) and the site (`serve_site`) in one trio loop on a thread, until `stop`."""

    def __init__(self, store: Store, replay_dir: Path) -> None:
        self.url = ""
        self.grpc = ""
        self.match_id = ""
        self._ready = threading.Event()
        self._token: trio.lowlevel.TrioToken | None = None
        self._cancel: trio.CancelScope | None = None
        self.thread = threading.Thread(target=trio.run, args=(self._main, store, replay_dir), daemon=True)
        self.thread.start()
        assert self._ready.wait(30), "the site did not start"

    async def _main(self, store: Store, replay_dir: Path) -> None:
        with trio.CancelScope() as self._cancel:
            async with trio.open_nursery() as nursery:
                start = lambda task_status: serve(  # noqa: E731
                    "127.0.0.1", 0, replay_dir, operator_token=OPERATOR_TOKEN, task_status=task_status
                )
                hub, port = await nursery.start(start)
                http_port = await nursery.start(serve_site, Site(hub, store), "127.0.0.1", 0)
                variant = find_variant("grosstarock")
                names = tuple(f"idle{i}" for i in range(variant.seats))
                # A match that waits for bots that never come: its live stream stays open.
                self.match_id = hub.create_match(
                    MatchConfig(variant=variant, deals=1, seed=1, seat_names=names, start_timeout_s=600)
                ).match_id
                self.url, self.grpc = f"http://127.0.0.1:{http_port}", f"127.0.0.1:{port}"
                self._token = trio.lowlevel.current_trio_token()
                self._ready.set()

    def stop(self) -> None:
        assert self._token is not None and self._cancel is not None
        trio.from_thread.run_sync(self._cancel.cancel, trio_token=self._token)
        self.thread.join(30)

    def get(self, path: str) -> tuple[int, dict[str, str], str]:
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:
                return response.status, _headers(response.headers), response.read().decode()
        except urllib.error.HTTPError as error:
            with error:
                return error.code, _headers(error.headers), error.read().decode()


def _headers(message: Any) -> dict[str, str]:
    return {name.lower(): value for name, value in message.items()}


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SiteThread]:
    directory = tmp_path_factory.mktemp("web-input")
    store = Store(str(directory / "arena.db"))
    store.register_bot("alpha", ["grosstarock"])
    running = SiteThread(store, directory / "replays")
    try:
        yield running
    finally:
        running.stop()
        store.close()


def _error(site: SiteThread, path: str, status: int) -> str:
    """The error text of a JSON answer that must be `status`."""
    code, _headers, body = site.get(path)
    assert code == status, (path, code, body)
    assert "Traceback" not in body, path
    detail = json.loads(body)["error"]
    assert isinstance(detail, str) and detail and "\n" not in detail, (path, body)
    return detail


# --------------------------------------------------------------------- query integers


@pytest.mark.parametrize(
    "query",
    [
        "limit=%C2%B2",  # "²": str.isdigit() is true, int() refuses it
        "limit=%D9%A3",  # "٣", an Arabic-Indic three: int() would take it
        "limit=%EF%BC%95",  # a fullwidth "５"
        "limit=0",
        "limit=201",
        "limit=-1",
        "limit=%2B5",
        "limit=%205",
        "limit=5%0a",
        "limit=5.0",
        "limit=1_0",
        "limit=0x10",
        "limit=" + "0" * 20 + "5",  # in range, but longer than any number the site takes
        "before=" + "9" * 4301,  # beyond what int() converts at all
        "before=" + "1" * 12_000,  # near the longest request line the server reads at all
        "before=4611686018427387905",  # 2**62 + 1
        "before=-5",
        "before=%C2%B9%C2%B2",
    ],
)
def test_a_query_integer_is_ascii_digits_of_bounded_length(site: SiteThread, query: str) -> None:
    name = query.split("=")[0]
    assert _error(site, f"/api/matches?{query}", 400).startswith(f"{name}: expected a whole number")


def test_good_query_integers_are_taken(site: SiteThread) -> None:
    for query in ("limit=1", "limit=200", "limit=007", "before=4611686018427387904", "before=0", "limit="):
        code, _headers, body = site.get(f"/api/matches?{query}")
        assert code == 200, (query, body)
        assert isinstance(json.loads(body)["matches"], list)


# --------------------------------------------------------------------- names match whole


@pytest.mark.parametrize("name", NEWLINE_NAMES)
def test_a_name_with_more_than_the_pattern_is_no_name(site: SiteThread, name: str) -> None:
    quoted = urllib.request.quote(name, safe="%")
    # A control character is refused before routing ("no page at"), anything else by the name's pattern.
    assert _error(site, f"/api/bots/{quoted}", 404).startswith(("no bot named", "no page at"))
    code, _headers, body = site.get(f"/bots/{quoted}")
    assert code == 404 and "404 Not found" in body
    assert _error(site, f"/api/matches?bot={quoted}", 400) == "bot: not a valid value"
    assert site.get(f"/matches?bot={quoted}")[0] == 400


@pytest.mark.parametrize(
    "path",
    [
        "/api/standings%0a",
        "/api/matches%0A",
        "/matches%0a",
        "/%0a",
        "/static/site.css%0a",
        "/api/bots/alpha%00",
    ],
)
def test_a_path_with_a_control_character_is_no_page(site: SiteThread, path: str) -> None:
    """Starlette's routes end in `$`, which matches before a final newline: refused before routing."""
    code, headers, body = site.get(path)
    assert code == 404, (path, body)
    if path.startswith("/api/"):
        assert json.loads(body)["error"].startswith("no page at")
    else:
        assert "404 Not found" in body
    _assert_secured(headers, path)


def test_the_name_itself_is_served(site: SiteThread) -> None:
    assert site.get("/bots/alpha")[0] == 200
    code, _headers, body = site.get("/api/bots/alpha")
    assert code == 200 and json.loads(body)["name"] == "alpha"
    assert site.get("/api/matches?bot=alpha")[0] == 200


@pytest.mark.parametrize("suffix", ["%0a", "%0A", "%0d%0a", "%20", "0"])
def test_a_match_id_with_more_than_16_hex_digits_is_no_match_id(site: SiteThread, suffix: str) -> None:
    for path in ("", "/replay", "/position", "/live"):
        detail = _error(site, f"/api/matches/{site.match_id}{suffix}{path}", 404)
        assert detail.startswith(("no match", "no page at")), detail
    assert site.get(f"/matches/{site.match_id}{suffix}/live")[0] == 404
    assert site.get(f"/api/matches/{site.match_id}/position")[0] == 200


@pytest.mark.parametrize("name", ["alpha\n", "beta\r\n", "gamma\n\n", "delta "])
def test_a_name_with_a_trailing_newline_cannot_be_registered(tmp_path: Path, name: str) -> None:
    store = Store(str(tmp_path / "arena.db"))
    try:
        with pytest.raises(StoreError, match="bot name"):
            store.register_bot(name)
        assert store.register_bot(name.strip())[0].name == name.strip()
    finally:
        store.close()


def test_a_ladder_bot_name_with_a_trailing_newline_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "ladder.toml"
    for name in ("alpha\n", "alpha\r\n"):
        bots = [{"name": n, "command": "true"} for n in (name, "b", "c")]
        with pytest.raises(LadderFileError, match="a bot needs a name"):
            parse_ladder({"variant": "grosstarock", "bots": bots}, path)
    bots = [{"name": n, "command": "true"} for n in ("alpha", "b", "c")]
    assert [bot.name for bot in parse_ladder({"variant": "grosstarock", "bots": bots}, path).bots] == [
        "alpha",
        "b",
        "c",
    ]


def test_get_replay_refuses_a_match_id_with_a_trailing_newline(site: SiteThread) -> None:
    with admin_channel(site.grpc, OPERATOR_TOKEN) as channel:
        admin = pb_grpc.AdminServiceStub(channel)
        with pytest.raises(grpc.RpcError) as refused:
            admin.GetReplay(pb.GetReplayRequest(match_id=site.match_id + "\n"), timeout=10)
        assert refused.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        with pytest.raises(grpc.RpcError) as waiting:  # the id itself: known, and not over yet
            admin.GetReplay(pb.GetReplayRequest(match_id=site.match_id), timeout=10)
        assert waiting.value.code() is grpc.StatusCode.FAILED_PRECONDITION


# --------------------------------------------------------------------- closed sets


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        ("/api/standings?variant=danishh", "variant"),
        ("/api/standings?variant=Danish", "variant"),
        ("/api/standings?variant=danish%0a", "variant"),
        ("/api/standings?variant=%3Cb%3E", "variant"),
        ("/api/matches?state=lost", "state"),
        ("/api/matches?state=Finished", "state"),
        ("/api/matches?state=finished%0a", "state"),
    ],
)
def test_a_value_outside_a_closed_set_is_400_listing_the_set(
    site: SiteThread, path: str, parameter: str
) -> None:
    detail = _error(site, path, 400)
    assert detail.startswith(f"{parameter}: expected one of "), detail
    page = path.replace("/api/standings", "/").replace("/api/matches", "/matches")
    assert site.get(page)[0] == 400


def test_every_variant_is_a_valid_filter(site: SiteThread) -> None:
    for name in VARIANT_NAMES:
        code, _headers, body = site.get(f"/api/standings?variant={name}")
        assert code == 200 and json.loads(body)["variant"] == name, body
        assert site.get(f"/?variant={name}")[0] == 200


# --------------------------------------------------------------------- security headers


def _assert_secured(headers: dict[str, str], path: str, csp: str = SITE_CSP) -> None:
    assert headers.get("x-content-type-options") == "nosniff", (path, headers)
    assert headers.get("x-frame-options") == "DENY", (path, headers)
    assert headers.get("content-security-policy") == csp, (path, headers)


@pytest.mark.parametrize(
    ("path", "status"),
    [
        ("/", 200),
        ("/matches", 200),
        ("/bots/alpha", 200),
        ("/static/site.css", 200),
        ("/static/common.js", 200),
        ("/static/nothing.js", 404),
        ("/api/standings", 200),
        ("/api/matches", 200),
        ("/api/matches?limit=x", 400),
        ("/api/bots/nobody", 404),
        ("/api/nothing", 404),
        ("/nothing", 404),
        ("/matches?state=lost", 400),
        ("/matches/{match_id}", 303),
        ("/matches/{match_id}/live", 200),
        ("/api/matches/{match_id}/replay", 409),
        ("/api/matches/{match_id}/position", 200),
    ],
)
def test_every_answer_carries_the_security_headers(site: SiteThread, path: str, status: int) -> None:
    path = path.format(match_id=site.match_id)
    if status == 303:  # urllib would follow it
        opener = urllib.request.build_opener(NoRedirect)
        with pytest.raises(urllib.error.HTTPError) as redirect:
            opener.open(site.url + path, timeout=10)
        with redirect.value:
            assert redirect.value.code == 303
            assert redirect.value.headers["location"] == path + "/live"  # the match has not ended
            _assert_secured(_headers(redirect.value.headers), path)
        return
    code, headers, _body = site.get(path)
    assert code == status, path
    _assert_secured(headers, path)


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any) -> None:
        return None


def test_the_site_policy_allows_no_inline_script_nor_framing() -> None:
    directives = dict(d.strip().split(" ", 1) for d in SITE_CSP.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == "'self'" and directives["style-src"] == "'self'"
    assert directives["frame-ancestors"] == "'none'"
    replay = dict(d.strip().split(" ", 1) for d in REPLAY_CSP.split(";"))
    assert replay["frame-ancestors"] == "'none'" and replay["default-src"] == "'none'"
    assert all(source.startswith("'sha256-") for source in replay["script-src"].split())
    assert "unsafe" not in SITE_CSP + REPLAY_CSP


def test_a_live_stream_carries_the_security_headers(site: SiteThread) -> None:
    with urllib.request.urlopen(f"{site.url}/api/matches/{site.match_id}/live", timeout=10) as response:
        assert response.status == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        _assert_secured(_headers(response.headers), "live")
        assert response.readline().startswith(b"event: position")


def test_a_500_carries_the_security_headers_and_no_traceback(tmp_path: Path) -> None:
    store = FailingStore(str(tmp_path / "arena.db"))
    failing = SiteThread(store, tmp_path / "replays")
    try:
        code, headers, body = failing.get("/api/standings")
        assert code == 500 and json.loads(body)["error"] == "the server could not answer this request"
        _assert_secured(headers, "/api/standings")
        code, headers, body = failing.get("/")
        assert code == 200  # the page itself reads nothing
        code, headers, body = failing.get("/bots/alpha")
        assert code == 404
        _assert_secured(headers, "/bots/alpha")
    finally:
        failing.stop()
        store.close()


def test_an_error_page_escapes_what_the_address_said(site: SiteThread) -> None:
    code, headers, body = site.get("/bots/" + urllib.request.quote('<!--<script>"x"', safe=""))
    assert code == 404
    assert "&lt;!--&lt;script&gt;&quot;x&quot;" in body and "<!--<script>" not in body
    _assert_secured(headers, "/bots/...")
