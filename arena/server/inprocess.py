"""In-process seats: a bot of the Python SDK played inside the referee's process.

A seat's link (`InProcessLink`) is the transport: where a bot stream would put the referee's
messages on the wire, it parses them into the very `ServerMessage` a dialled-in bot's SDK would
parse from the same bytes and answers through the SDK's own per-match logic (`_Session`: the
tries after a rejection, `make_action`), then hands its answer to `MatchRunner.deliver_action`,
which judges it as `deliver` judges the `BotMessage` the gRPC reader would hand over (without
building that message; anything but a small answer to the pending request goes through `deliver`
itself). So the referee's rules, clocks, limits and faults apply unchanged: one referee, no second
rules path. It lives in the transport layer (beside the gRPC bridge) because
it is a link, and because the SDK it drives imports grpc, which the referee may not.

What it skips: the bot process, the gRPC stream, HTTP/2, the hand-offs between the grpc.aio
thread and trio, and serialising the answer. The bot is called directly from `send`, on the trio
thread, while `MatchRunner._decide`'s clock runs: its time is charged as a dialled-in bot's is.
A bot that raises (or calls `sys.exit`) becomes what the same bot's process would: its link is
lost and the seat crashed, "the bot process exited with status N" (1 for an exception, as
Python's own exit status), so replays read the same in both modes. A bot that overruns its time
is a timeout when it returns; one that never returns blocks the referee (docs/LADDER.md says
when in-process is the wrong choice).

Specs (`inprocess:SPEC [ARGUMENT ...]`): an example bot's name (random, heuristic, search),
`bridge` (the research bridge, arena/research/bridge.py: its policies and OpenSpiel bots),
`MODULE` (its `decide`), `MODULE:ATTRIBUTE` or `PATH.py:ATTRIBUTE`. A class is instantiated for
each match, with `seed=` (the match's ``ARENA_BOT_SEED``) when it takes one and `argv=` (the
arguments, split as a shell would) when there are any (its static `arguments(argv)`, if it has
one, checks them when the spec is loaded); a function is the decide hook; another object with
`decide` is used as it is, shared by every match.

The referee's side is `MatchRunner`'s ordinary decision path; a synchronous link (this one) only
lets it skip what waiting for a remote answer needs (`MatchRunner._answer` takes the answer from
the seat's inbox without a wake-up, an alarm or a checkpoint; no replay flush before the request).
A request reaches the bot as the referee encodes it for every link, as bytes (built by hand,
cheaper than a message object), parsed here into the bot's own `ServerMessage`: the bot cannot
reach the referee's state through it. Other messages are objects, handed over as copies.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import inspect
import shlex
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import structlog

from ..referee.runner import MatchRunner
from ..referee.seat import CloseReason
from ..v1 import arena_pb2 as pb

log = structlog.get_logger()

PREFIX = "inprocess:"
SDK_PATH = Path(__file__).resolve().parents[2] / "clients" / "python"
# The SDK's example bots as in-process specs, with the name their processes say in Hello.
EXAMPLES = {
    "random": ("arena_bot.random_bot:RandomBot", "random"),
    "heuristic": ("arena_bot.heuristic_bot:decide", "heuristic"),
    "search": ("arena_bot.search_bot:SearchBot", "search"),
    "bridge": ("arena.research.bridge:BridgeBot", ""),  # needs the [rl] extra
}
PROTOCOL_VERSION = 1


class InProcessError(ValueError):
    """An in-process spec that names no bot: one line naming the spec."""


def is_inprocess(command: str) -> bool:
    return command.startswith(PREFIX)


def _sdk_importable() -> None:
    """A source checkout's SDK on the path when it is not installed (as `bot_environment` does
    for bot processes)."""
    if importlib.util.find_spec("arena_bot") is None and SDK_PATH.is_dir():
        sys.path.append(str(SDK_PATH))


def _module(name: str, cwd: Path | None) -> ModuleType:
    if name.endswith(".py"):
        path = (cwd or Path.cwd()) / name
        if not path.is_file():
            raise InProcessError(f"no file {str(path)!r}")
        key = f"arena_inprocess_{abs(hash(str(path.resolve())))}"
        if key in sys.modules:
            return sys.modules[key]
        spec = importlib.util.spec_from_file_location(key, path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        try:
            spec.loader.exec_module(module)
        except BaseException:
            del sys.modules[key]
            raise
        return module
    if cwd is not None and str(cwd) not in sys.path:
        sys.path.append(str(cwd))  # a bot module beside the ladder file, as its process would find it
    return importlib.import_module(name)


@dataclass(frozen=True)
class InProcessBot:
    """A resolved spec: makes each match's bot (`new`) and says what its Hello says."""

    spec: str
    target: Any  # a class, a function or an object with `decide`
    hello_name: str  # "" : the seat's bot name, as the SDK's `main` says without a name
    version: str
    argv: tuple[str, ...] = ()  # the spec's arguments, for the class
    example: bool = False  # an example bot: its Hello says `hello_name` whatever the instance says

    @functools.cached_property
    def takes_seed(self) -> bool:
        """Whether the class takes `seed=` (looked up once, not for every match)."""
        return inspect.isclass(self.target) and "seed" in inspect.signature(self.target).parameters

    def new(self, seed: str) -> tuple[Callable[[pb.DecisionRequest], Any], Any]:
        """This match's decide hook, and the `Bot` whose `on_…` hooks are called (or None)."""
        target: Any = self.target
        if inspect.isclass(target):
            kwargs: dict[str, Any] = {"argv": list(self.argv)} if self.argv else {}
            if self.takes_seed:
                kwargs["seed"] = seed or None
            target = target(**kwargs)
        elif not hasattr(target, "decide"):
            return target, None  # a decide function
        from arena_bot.match import Bot

        return target.decide, target if isinstance(target, Bot) else None


def load_bot(command: str, cwd: Path | None = None) -> InProcessBot:
    """Resolve `inprocess:SPEC`; InProcessError (one line) when it names no bot."""
    text = command[len(PREFIX) :].strip() if is_inprocess(command) else command.strip()
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise InProcessError(f"{command!r}: {exc}") from None
    if not words:
        raise InProcessError(f"{command!r}: name a module, MODULE:ATTRIBUTE or an example bot")
    text, argv = words[0], tuple(words[1:])
    spec, example_name = EXAMPLES.get(text, (text, ""))
    _sdk_importable()
    module_name, _, attribute = spec.rpartition(":") if ":" in spec else (spec, "", "decide")
    try:
        module = _module(module_name, cwd)
    except InProcessError as exc:
        raise InProcessError(f"{command!r}: {exc}") from None
    except Exception as exc:
        raise InProcessError(f"{command!r}: cannot import {module_name!r}: {exc}") from None
    target = getattr(module, attribute, None)
    if target is None:
        raise InProcessError(f"{command!r}: {module_name!r} has no {attribute!r}")
    if not (inspect.isclass(target) or callable(target) or hasattr(target, "decide")):
        raise InProcessError(f"{command!r}: {attribute!r} is no bot class, bot or decide function")
    if inspect.isclass(target) and not callable(getattr(target, "decide", None)):
        raise InProcessError(f"{command!r}: the class {attribute!r} has no decide method")
    _check_arguments(command, target, attribute, argv)
    name = example_name or _text(getattr(target, "name", ""))
    version = _text(getattr(target, "version", ""))
    return InProcessBot(command, target, name, version, argv, bool(example_name))


def _check_arguments(command: str, target: Any, attribute: str, argv: tuple[str, ...]) -> None:
    """Arguments for a class that takes them, checked by its `arguments` (none are arguments too)."""
    takes_argv = inspect.isclass(target) and "argv" in inspect.signature(target).parameters
    if argv and not takes_argv:
        raise InProcessError(f"{command!r}: {attribute!r} takes no arguments (a class with argv= does)")
    check = getattr(target, "arguments", None)
    if takes_argv and callable(check):
        try:
            check(list(argv))
        except ValueError as exc:
            raise InProcessError(f"{command!r}: {exc}") from None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _no_decision(request: Any) -> Any:
    raise RuntimeError("a request before the bot was made")


def exit_status(exc: BaseException) -> int:
    """The status a bot process would exit with after `exc` escaped its `main`."""
    if isinstance(exc, SystemExit):
        code = exc.code
        if code is None:
            return 0
        return code if isinstance(code, int) else 1
    return 1


class InProcessLink:
    """One seat's link to a bot in this process (see the module's docstring)."""

    # Its bot has answered (or failed) by the time `send` returns: the referee takes the answer
    # from the seat's inbox without waiting, and flushes no replay line before asking it.
    synchronous = True

    def __init__(
        self, runner: MatchRunner, seat: int, bot: InProcessBot, seed: str, log_path: Path | None = None
    ) -> None:
        from arena_bot.match import _Session  # the SDK's own per-match state: the same retries

        self.open = True
        self.runner = runner
        self.seat = seat
        self.log_path = log_path
        self.exit_status: int | None = None  # set when the bot "exited": crashed, or its match ended
        self.crashed = False  # it raised before its match ended
        self.bot, self.seed = bot, seed
        self.hooks: Any = None
        self.session: Any = _Session(_no_decision, None)  # its messages are the SDK's types: the same classes
        self.name = bot.hello_name or runner.config.seat_names[seat]
        self.version = bot.version
        self._parse = pb.ServerMessage.FromString

    def start(self) -> None:
        """Make the match's bot, attach to the seat and say Hello, as a bot dialling in would."""
        decide, self.hooks = self.bot.new(self.seed)
        self.session.decide, self.session.bot = decide, self.hooks
        made = self.hooks
        if not self.bot.example and made is not None and _text(getattr(made, "name", "")):
            # What a bot made from its arguments calls itself, as the SDK's `main(bot)` says it.
            self.name, self.version = made.name, _text(getattr(made, "version", "")) or self.version
        self.runner.attach(self.seat, self)
        hello = pb.Hello(bot_name=self.name, bot_version=self.version, protocol_version=PROTOCOL_VERSION)
        self.runner.deliver(self.seat, self, pb.BotMessage(hello=hello))

    def send(self, message: pb.ServerMessage | bytes) -> None:
        if not self.open:
            return
        if isinstance(message, bytes):
            parsed = self._parse(message)
        else:  # a copy: the bot may keep or change it, the referee's stays as it was
            parsed = pb.ServerMessage()
            parsed.CopyFrom(message)
        try:
            self._receive(parsed)
        except (Exception, SystemExit) as exc:
            self._crash(exc)

    def _receive(self, message: pb.ServerMessage) -> None:
        """`arena_bot.match._play_stream`'s loop body, for one message."""
        kind = message.WhichOneof("kind")
        session, hooks = self.session, self.hooks
        if kind == "request":
            request = message.request
            if hooks is not None:
                for event in request.events:
                    hooks.on_event(event)
            session.pending = request
            session.tried = []
            self._answer(request)
        elif kind == "rejected":
            rejected = message.rejected
            if hooks is not None:
                hooks.on_rejected(rejected)
            pending = session.pending
            if pending is not None and pending.request_id == rejected.request_id:
                self._answer(pending)
        elif kind == "events":
            if hooks is not None:
                for event in message.events.events:
                    hooks.on_event(event)
        elif kind == "match_start":
            if hooks is not None:
                hooks.on_match_start(message.match_start)
        elif kind == "match_end":
            self.exit_status = 0
            if hooks is not None:
                hooks.on_match_end(message.match_end)

    def _answer(self, request: pb.DecisionRequest) -> None:
        session = self.session
        action = session.reply_for(request)
        if action is None:
            return  # every legal action was rejected: the SDK waits (for the deadline)
        session.tried.append(action)
        # Judged as the `BotMessage` carrying it would be, without building that message: the
        # referee reads the action before the bot runs again, so no copy is needed.
        self.runner.deliver_action(self.seat, self, request.request_id, action)

    def _crash(self, exc: BaseException) -> None:
        """What the bot's process would have done: died with its status, its stream broken."""
        status = exit_status(exc)
        self.exit_status = status
        text = "".join(traceback.format_exception(exc))
        if self.log_path is not None:
            with self.log_path.open("a") as out:
                out.write(text)
        log.warning("in-process bot raised", match_id=self.runner.match_id, seat=self.seat, error=repr(exc))
        self.close()
        if not self.runner.done.is_set():
            self.crashed = True
            self.runner.mark_crashed(self.seat, f"the bot process exited with status {status}")

    def close(self, reason: CloseReason | None = None, details: str = "") -> None:
        if self.open:
            self.open = False
            self.runner.detach(self.seat, self)


def seat_inprocess(
    runner: MatchRunner, seat: int, bot: InProcessBot, seed: str, log_path: Path | None = None
) -> InProcessLink:
    """Seat `bot` at `seat` of `runner` (before or while it runs); its link."""
    link = InProcessLink(runner, seat, bot, seed, log_path)
    try:
        link.start()
    except (Exception, SystemExit) as exc:  # its constructor or on_match_start raised
        link._crash(exc)
    return link
