"""The ladder file: a TOML document naming the bots and how they play.

    variant = "grosstarock"      # required; `options` is a table of variant options
    seed = 1
    deal_sets = 4                # each deal set is played at every table in every seat arrangement
    deals = 3                    # dealer turns per match (default: one per seat)
    concurrency = 2
    referees = 2                 # referee processes the concurrent matches are spread over
    processes = "per-match"      # or "persistent": a local bot's process plays match after match
    sandbox = false              # true: command bots run in the sandbox on CPU clocks (docs/SANDBOX.md)
    store = "arena.db"           # the arena store of submitted versions (`version` bots; docs/SUBMIT.md)
    [time_control]               # per_decision_ms, bank_ms, increment_ms, latency_allowance_ms
    [faults]                     # policy, max_invalid, reconnect_grace_ms, start_timeout_ms
    [[bots]]                     # name and command, or name and token / token_env (a remote bot)
    [decide]                     # adaptive: pair (default: the ranking), confidence, effect, min_deal_sets

Every key is checked: an unknown key, a wrong type or value, a missing command is one
`LadderFileError` naming the file and the key, before anything runs.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import shutil
import sys
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..engine import ConfigError, Variant, find_variant
from ..files import InputFileError, read_input_text
from ..referee.seat import TimeControl
from ..replay.log import FAULT_POLICIES
from ..server.inprocess import InProcessError, is_inprocess, load_bot
from .decide import Decide

SEATINGS = ("permutations", "rotations")
BOT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$")
MIN_TOKEN_LENGTH = 16

TOP_KEYS = {
    "name",
    "variant",
    "options",
    "seed",
    "deal_sets",
    "deals",
    "seating",
    "concurrency",
    "referees",
    "processes",
    "sandbox",
    "store",
    "database",
    "replay_dir",
    "host",
    "port",
    "time_control",
    "faults",
    "bots",
    "decide",
}
DECIDE_KEYS = {"pair", "confidence", "effect", "min_deal_sets"}
TIME_KEYS = {"per_decision_ms", "bank_ms", "increment_ms", "latency_allowance_ms"}
FAULT_KEYS = {"policy", "max_invalid", "reconnect_grace_ms", "start_timeout_ms"}
BOT_KEYS = {"name", "command", "token", "token_env", "version", "env", "cwd", "processes", "sandbox"}
SUBMITTED = re.compile(r"^([A-Za-z0-9][A-Za-z0-9_.+-]{0,63})@([1-9][0-9]{0,8})$")  # `version = "NAME@N"`
# How a local bot is run: a new process for every match (the default: nothing a bot learns
# survives from one seat arrangement of a deal set to the next), or one per concurrent slot
# that plays match after match (much faster for short matches). docs/LADDER.md.
PROCESS_MODES = ("per-match", "persistent")


class LadderFileError(ValueError):
    """A ladder file that cannot be used; the message names the file and the key."""


@dataclass(frozen=True)
class BotSpec:
    name: str
    command: str = ""  # as written in the file; empty for a remote bot
    argv: tuple[str, ...] = ()
    token: str = ""  # a remote bot's secret token
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: Path = Path(".")
    processes: str = "per-match"  # PROCESS_MODES; not part of the identity: recorded per match
    inprocess: str = ""  # `inprocess:SPEC`: a Python SDK bot in the referee's process (no argv)
    sandbox: bool = False  # a command bot run in the sandbox, on a CPU clock (docs/SANDBOX.md)
    version: str = ""  # "NAME@N": a submitted version's built tree, run in the sandbox (docs/SUBMIT.md)

    @property
    def remote(self) -> bool:
        return not self.argv and not self.inprocess and not self.version

    @property
    def mode(self) -> str:
        """How the bot ran in a match, as recorded: `remote`, `in-process` or one of PROCESS_MODES."""
        return "remote" if self.remote else "in-process" if self.inprocess else self.processes

    def identity(self) -> dict[str, Any]:
        """What makes this bot the same bot when a ladder is resumed (the token is no part of it)."""
        found = {"name": self.name, "command": self.command, "remote": self.remote, "env": dict(self.env)}
        if self.version:
            found["version"] = self.version
        return {**found, "sandbox": True} if self.sandbox else found  # (older ladders: no key)


@dataclass(frozen=True)
class LadderConfig:
    path: Path
    name: str
    variant: Variant
    bots: tuple[BotSpec, ...]
    seed: int = 0
    deal_sets: int = 1
    deals: int = 3
    seating: str = "permutations"
    concurrency: int = 2
    referees: int = 1  # referee processes on this machine (`referees.py`); at most `concurrency` are used
    time_control: TimeControl = field(default_factory=TimeControl)
    fault_policy: str = "substitute"
    max_invalid: int = 3
    reconnect_grace_ms: int = 10_000
    start_timeout_ms: int = 30_000
    database: Path = Path("ladder.sqlite")
    replay_dir: Path = Path("ladder-replays")
    host: str = "127.0.0.1"
    port: int = 0
    decide: Decide | None = None  # `[decide]`: play deal sets until it is decided (`decide.py`)
    store: str = ""  # the arena store (a path or a postgresql:// URL) of the bots' submitted versions

    @property
    def seats(self) -> int:
        return self.variant.seats

    def bot(self, name: str) -> BotSpec:
        for bot in self.bots:
            if bot.name == name:
                return bot
        raise KeyError(name)

    def identity(self) -> dict[str, Any]:
        """Everything a recorded match depends on. A ladder may be resumed with more deal sets,
        another concurrency or other paths, but not with other bots, decks or rules."""
        tc = self.time_control
        return {
            "variant": self.variant.name,
            "options": dict(self.variant.options),
            "seed": self.seed,
            "deals": self.deals,
            "seating": self.seating,
            "bots": [bot.identity() for bot in self.bots],
            "time_control": [tc.per_decision_ms, tc.bank_ms, tc.increment_ms]
            + ([tc.latency_allowance_ms] if tc.latency_allowance_ms else []),  # ladders from before
            "fault_policy": self.fault_policy,
            "max_invalid": self.max_invalid,
        }


def python_command(text: str) -> str:
    """`{python}` in a command stands for this Python interpreter (the one with the SDK)."""
    return text.replace("{python}", shlex.quote(sys.executable))


# The SDK's example bots by name (`arena ladder ab random …`); `{python}` is resolved where they run.
EXAMPLE_COMMANDS = {
    "heuristic": "{python} -m arena_bot.heuristic_bot",
    "random": "{python} -m arena_bot.random_bot",
    "search": "{python} -m arena_bot.search_bot",
}


def local_bot(
    name: str, command: str, env: Mapping[str, str], cwd: Path, processes: str = "per-match"
) -> BotSpec:
    """A local bot from its command as written (`{python}` taken as this interpreter), checked
    here: ValueError naming the program when it is not on this machine (an in-process bot's
    module, when it cannot be imported)."""
    if is_inprocess(command):
        try:
            load_bot(command, cwd)
        except InProcessError as exc:
            raise ValueError(f"bot {name!r}: {exc}") from None
        return BotSpec(name=name, command=command, inprocess=command, env=dict(env), cwd=cwd)
    try:
        argv = tuple(shlex.split(python_command(command)))
    except ValueError as exc:
        raise ValueError(f"bot {name!r}: cannot split the command {command!r}: {exc}") from None
    if not argv:
        raise ValueError(f"bot {name!r}: an empty command")
    program = argv[0]
    if not ((cwd / program).is_file() if os.sep in program else shutil.which(program)):
        raise ValueError(f"bot {name!r}: program {program!r} not found")
    return BotSpec(name=name, command=command, argv=argv, env=dict(env), cwd=cwd, processes=processes)


def bot_from_text(text: str, name: str | None = None, processes: str = "per-match") -> BotSpec:
    """An example bot by name (heuristic, random, search), or a command (`arena ladder ab`)."""
    command = EXAMPLE_COMMANDS.get(text, text)
    bot = local_bot(name or text, command, {}, Path.cwd(), processes)
    if name is None and bot.inprocess:
        spec = (text.removeprefix("inprocess:").split() or [""])[0].split(":")[0]
        name = (Path(spec).stem if spec.endswith(".py") else spec.rsplit(".", 1)[-1]) or "bot"
    if name is None:
        name = text if text in EXAMPLE_COMMANDS else Path(bot.argv[-1]).stem or "bot"
    return dataclasses.replace(bot, name=name)


class _Reader:
    """Typed access to one TOML table, with errors that name the file and the key."""

    def __init__(self, path: Path, table: Mapping[str, Any], where: str, known: set[str]) -> None:
        self.path = path
        self.table = table
        self.where = where
        unknown = sorted(set(table) - known)
        if unknown:
            raise self.error(
                f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(sorted(known))})"
            )

    def error(self, message: str, key: str | None = None) -> LadderFileError:
        place = ".".join(p for p in (self.where, key) if p)
        return LadderFileError(f"{self.path}: {place + ': ' if place else ''}{message}")

    def integer(self, key: str, default: int, minimum: int | None = None, maximum: int | None = None) -> int:
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.error(f"expected a whole number, got {value!r}", key)
        if minimum is not None and value < minimum:
            raise self.error(f"expected at least {minimum}, got {value}", key)
        if maximum is not None and value > maximum:
            raise self.error(f"expected at most {maximum}, got {value}", key)
        return value

    def text(self, key: str, default: str, choices: tuple[str, ...] | None = None) -> str:
        value = self.table.get(key, default)
        if not isinstance(value, str):
            raise self.error(f"expected a string, got {value!r}", key)
        if choices is not None and value not in choices:
            raise self.error(f"expected one of {', '.join(choices)}, got {value!r}", key)
        return value

    def table_of(self, key: str) -> Mapping[str, Any]:
        value = self.table.get(key, {})
        if not isinstance(value, dict):
            raise self.error(f"expected a table, got {value!r}", key)
        return value

    def flag(self, key: str, default: bool) -> bool:
        value = self.table.get(key, default)
        if not isinstance(value, bool):
            raise self.error(f"expected true or false, got {value!r}", key)
        return value

    def strings(self, key: str) -> dict[str, str]:
        """A table of scalar values, as strings (TOML `players = 4` means "4")."""
        result: dict[str, str] = {}
        for name, value in self.table_of(key).items():
            if isinstance(value, bool):
                value = "true" if value else "false"
            if not isinstance(value, str | int | float):
                raise self.error(f"{name}: expected a string or a number, got {value!r}", key)
            result[str(name)] = str(value)
        return result


def load_ladder(path: Path) -> LadderConfig:
    """Read and check a ladder file."""
    try:
        text = read_input_text(path, "a ladder file")
    except InputFileError as exc:
        raise LadderFileError(str(exc)) from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LadderFileError(f"{path}: invalid TOML: {exc}") from None
    return parse_ladder(data, path)


def parse_ladder(data: Mapping[str, Any], path: Path) -> LadderConfig:
    top = _Reader(path, data, "", TOP_KEYS)
    base = path.resolve().parent
    if "variant" not in data:
        raise top.error("missing key 'variant' (one of grosstarock, german-1754, danish, …)")
    try:
        variant = find_variant(top.text("variant", ""), top.strings("options"))
    except ConfigError as exc:
        raise top.error(str(exc), "variant") from None

    tc_reader = _Reader(path, top.table_of("time_control"), "time_control", TIME_KEYS)
    time_control = TimeControl(
        per_decision_ms=tc_reader.integer("per_decision_ms", 10_000, 1, 3_600_000),
        bank_ms=tc_reader.integer("bank_ms", 60_000, 0, 36_000_000),
        increment_ms=tc_reader.integer("increment_ms", 0, 0, 3_600_000),
        latency_allowance_ms=tc_reader.integer("latency_allowance_ms", 0, 0, 60_000),
    )
    faults = _Reader(path, top.table_of("faults"), "faults", FAULT_KEYS)

    raw_bots = data.get("bots", [])
    if not isinstance(raw_bots, list) or not all(isinstance(b, dict) for b in raw_bots):
        raise top.error("expected [[bots]] tables", "bots")
    processes = top.text("processes", "per-match", PROCESS_MODES)
    sandbox = top.flag("sandbox", False)
    bots = tuple(_bot(path, base, i, raw, processes, sandbox) for i, raw in enumerate(raw_bots))
    names = [bot.name for bot in bots]
    for name in names:
        if names.count(name) > 1:
            raise top.error(f"two bots are named {name!r}", "bots")
    tokens = [bot.token for bot in bots if bot.remote]
    if len(set(tokens)) < len(tokens):
        raise top.error("two remote bots have the same token: a token names one bot", "bots")
    if len(bots) < variant.seats:
        raise top.error(
            f"{variant.name} has {variant.seats} seats: the ladder needs at least {variant.seats} bots, "
            f"got {len(bots)}",
            "bots",
        )

    database = base / top.text("database", f"{path.stem}.sqlite")
    default_replays = f"{Path(database).stem}-replays"
    port = top.integer("port", 0, 0, 65535)
    if port == 0 and any(bot.remote for bot in bots):
        raise top.error("a remote bot needs a fixed port to dial: set port", "port")
    # One referee process per core by default; a fixed port (for remote bots) is one server.
    referees = top.integer("referees", 1 if port else max(1, os.cpu_count() or 1), 1, 1024)
    if port and referees > 1:
        raise top.error("a fixed port is one referee server: referees must be 1 with port", "referees")
    if any(bot.sandbox for bot in bots):  # its sandboxes reach the one server's Unix socket
        if "referees" in data and referees > 1:
            raise top.error("sandboxed bots play on one referee process: referees must be 1", "referees")
        referees = 1
    return LadderConfig(
        path=path,
        name=top.text("name", path.stem),
        variant=variant,
        bots=bots,
        seed=top.integer("seed", 0, 0, 2**62),
        deal_sets=top.integer("deal_sets", 1, 1, 1_000_000),
        deals=top.integer("deals", variant.seats, 1, 10_000),
        seating=top.text("seating", "permutations" if variant.seats == 3 else "rotations", SEATINGS),
        concurrency=top.integer("concurrency", max(1, os.cpu_count() or 1), 1, 1024),
        referees=referees,
        time_control=time_control,
        fault_policy=faults.text("policy", "substitute", FAULT_POLICIES),
        max_invalid=faults.integer("max_invalid", 3, 1, 100),
        reconnect_grace_ms=faults.integer("reconnect_grace_ms", 10_000, 0, 3_600_000),
        start_timeout_ms=faults.integer("start_timeout_ms", 30_000, 100, 3_600_000),
        database=database,
        replay_dir=base / top.text("replay_dir", str(database.parent / default_replays)),
        host=top.text("host", "127.0.0.1"),
        port=port,
        decide=_decide(path, top, names) if "decide" in data else None,
        store=_store(top, base),
    )


def _store(top: _Reader, base: Path) -> str:
    text = top.text("store", "")
    return text if not text or "://" in text else str(base / text)


def _decide(path: Path, top: _Reader, names: list[str]) -> Decide:
    reader = _Reader(path, top.table_of("decide"), "decide", DECIDE_KEYS)
    pair = reader.table.get("pair")
    if pair is not None and not (
        isinstance(pair, list) and len(pair) == 2 and all(n in names for n in pair) and pair[0] != pair[1]
    ):
        raise reader.error(f"expected two of the ladder's bots, got {pair!r}", "pair")
    numbers = {}
    for key, default, low, high in (("confidence", 0.95, 0.5, 1.0), ("effect", 0.3, 0.0, 10.0)):
        value = reader.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, int | float) or not low < value < high:
            raise reader.error(
                f"expected a number between {low:g} and {high:g} (exclusive), got {value!r}", key
            )
        numbers[key] = float(value)
    return Decide(
        pair=(pair[0], pair[1]) if pair else None,
        confidence=numbers["confidence"],
        effect=numbers["effect"],
        min_deal_sets=reader.integer("min_deal_sets", 6, 2, 1_000_000),
    )


def _bot(
    path: Path, base: Path, index: int, raw: Mapping[str, Any], processes: str, sandbox: bool = False
) -> BotSpec:
    reader = _Reader(path, raw, f"bots[{index}]", BOT_KEYS)
    name = reader.text("name", "")
    if not BOT_NAME.fullmatch(name):
        raise reader.error(
            f"a bot needs a name of letters, digits and _ . + - (at most 64), got {name!r}", "name"
        )
    reader.where = f"bots[{index}] ({name})"
    kinds = [key for key in ("command", "token", "token_env", "version") if key in raw]
    if len(kinds) != 1:
        raise reader.error(
            "give exactly one of command (a local bot), token or token_env (a remote bot), "
            "version (a submitted version)"
        )
    if kinds[0] == "version":
        version = reader.text("version", "")
        if not SUBMITTED.fullmatch(version):
            raise reader.error(f"expected a submitted version as NAME@N, got {version!r}", "version")
        if "cwd" in raw or "env" in raw:
            raise reader.error("cwd and env are for command bots: a submitted version runs as submitted")
        if not reader.flag("sandbox", True):
            raise reader.error("a submitted version runs in the sandbox only", "sandbox")
        mode = reader.text("processes", processes, PROCESS_MODES)
        return BotSpec(name=name, processes=mode, sandbox=True, version=version)
    env = reader.strings("env")
    cwd = base / reader.text("cwd", ".")
    if kinds[0] != "command":
        if "cwd" in raw or "env" in raw or "processes" in raw or "sandbox" in raw:
            raise reader.error("cwd, env, processes and sandbox are for local bots, which the ladder starts")
        if kinds[0] == "token":
            token = reader.text("token", "")
        else:
            variable = reader.text("token_env", "")
            token = os.environ.get(variable, "")
            if not token:
                raise reader.error(f"the environment variable {variable!r} is not set", "token_env")
        if len(token) < MIN_TOKEN_LENGTH or any(c.isspace() for c in token):
            raise reader.error(f"a token has at least {MIN_TOKEN_LENGTH} characters and no spaces")
        return BotSpec(name=name, token=token)
    command = reader.text("command", "")
    if is_inprocess(command):
        if "env" in raw or "processes" in raw or "sandbox" in raw:
            raise reader.error("env, processes and sandbox are for bots the ladder starts as processes")
        if not cwd.is_dir():
            raise reader.error(f"no directory {str(cwd)!r}", "cwd")
        try:
            load_bot(command, cwd)
        except InProcessError as exc:
            raise reader.error(str(exc), "command") from None
        return BotSpec(name=name, command=command, inprocess=command, cwd=cwd)
    try:
        argv = tuple(shlex.split(python_command(command)))
    except ValueError as exc:
        raise reader.error(f"cannot split the command: {exc}", "command") from None
    if not argv:
        raise reader.error("the command is empty", "command")
    if not cwd.is_dir():
        raise reader.error(f"no directory {str(cwd)!r}", "cwd")
    program = argv[0]
    found = (cwd / program).is_file() if os.sep in program else shutil.which(program) is not None
    if not found:
        raise reader.error(f"program {program!r} not found", "command")
    mode = reader.text("processes", processes, PROCESS_MODES)
    boxed = reader.flag("sandbox", sandbox)
    return BotSpec(name=name, command=command, argv=argv, env=env, cwd=cwd, processes=mode, sandbox=boxed)
