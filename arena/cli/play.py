"""`arena play`: one match between bot processes on this machine, and what went wrong with each seat."""

from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .common import (
    CliError,
    add_variant_arguments,
    dump,
    milliseconds,
    output_dir,
    positive_int,
    variant_of,
)

if TYPE_CHECKING:
    from ..referee.runner import MatchRunner
    from ..server.local import PlayResult

# Exit statuses of `arena play` (also in its --help).
OK = 0  # every seat said Hello and played without a fault (rejected answers alone are fine)
BAD_INPUT = 1  # no replay written: the replay folder cannot be written, the match was aborted
USAGE = 2  # a wrong command line (argparse)
SEAT_FAILED = 3  # the match was played, but a seat faulted or never said Hello
INTERRUPTED = 130  # Ctrl-C (SIGINT)
TERMINATED = 143  # SIGTERM

DESCRIPTION = """\
Start the server on a free port, launch one bot process per seat (each gets ARENA_ADDRESS
and ARENA_TOKEN in its environment), play the match, then print per seat the score, the
bot's name and version from its Hello, its faults by kind, its rejected answers and, when
anything went wrong with it, the path of its log; then the replay's path."""

EPILOG = f"""\
bots:
  --bot takes a command line, or the name of an example bot: random, heuristic,
  search (PIMC over the hidden cards, up to 1 s per decision; ARENA_THINK_MS sets it).
  Give one --bot per seat, in seat order; seats without one are filled with the
  example bots (heuristic first, then random): `--bot "python mybot.py"` alone
  plays your bot in seat 0 against them. Each bot's output goes to
  DIR/bot-logs/<match_id>-seat<N>.log. `--bot inprocess:SPEC` runs a bot of the
  Python SDK inside the referee's process instead (SPEC: an example bot's name,
  MODULE, MODULE:ATTRIBUTE or FILE.py:ATTRIBUTE, or "bridge ARGUMENTS" for the
  research bridge; docs/LADDER.md, "In-process bots").

exit status:
  {OK}    every seat said Hello and played without a fault (answers the referee
       rejected are shown, but alone they do not fail the match)
  {SEAT_FAILED}    a seat faulted (illegal, timeout, disconnect, crash, protocol) or never
       said Hello; the replay is written, the first cause is one line on stderr.
       A bot that exits (or cannot start) before its Hello stops the match at once:
       the cause is one line on stderr, the match unplayed (DIR/<match_id>.jsonl.part)
  {BAD_INPUT}    no replay written (e.g. the replay folder cannot be written)
  {USAGE}    a wrong command line (e.g. more --bot than the variant has seats)
  {INTERRUPTED}  interrupted by Ctrl-C (SIGINT), {TERMINATED} by SIGTERM: the bots are stopped and
       the unfinished replay stays as DIR/<match_id>.jsonl.part
"""


def register(commands: Any) -> None:
    play = commands.add_parser(
        "play",
        help="play one match between bot processes on this machine",
        description=DESCRIPTION,
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_variant_arguments(play)
    play.add_argument(
        "--deals", type=positive_int, default=None, metavar="N", help="dealer turns (default: seats)"
    )
    play.add_argument("--seed", type=int, default=0, metavar="S", help="seed of the decks (default 0)")
    play.add_argument(
        "--bot",
        action="append",
        default=[],
        metavar="CMD",
        help="a bot command, an example bot's name (random, heuristic, search), or inprocess:SPEC (a "
        "Python SDK bot in the referee's process); once per seat, in seat order; the seats left over "
        "get the example bots",
    )
    play.add_argument(
        "--replay-dir",
        type=Path,
        default=Path("replays/matches"),
        metavar="DIR",
        help="where the replay log and DIR/bot-logs/ go (default replays/matches)",
    )
    play.add_argument(
        "--per-decision-ms",
        type=positive_int,
        default=10_000,
        metavar="MS",
        help="time for each decision before the bank is drawn on (default 10000; docs/SERVER.md)",
    )
    play.add_argument(
        "--bank-ms",
        type=milliseconds,
        default=60_000,
        metavar="MS",
        help="each seat's time bank (default 60000)",
    )
    play.add_argument(
        "--increment-ms",
        type=milliseconds,
        default=0,
        metavar="MS",
        help="added to a seat's bank after each of its decisions (default 0)",
    )
    play.add_argument(
        "--latency-allowance-ms",
        type=milliseconds,
        default=0,
        metavar="MS",
        help="forgive each bot its measured network round trip, up to MS per decision (docs/SERVER.md)",
    )
    play.add_argument(
        "--fault-policy",
        choices=("substitute", "forfeit"),
        default="substitute",
        help="after a fault: a legal action is played for the seat (substitute, the default), or the "
        "match ends (forfeit)",
    )
    play.add_argument("--json", action="store_true", help="print the result as one JSON object")
    play.add_argument("-v", "--verbose", action="store_true", help="print the server's log lines on stderr")
    play.set_defaults(run=_cmd_play, parser=play)


# --------------------------------------------------------------------------- the seats' bots


@dataclass(frozen=True)
class SeatBot:
    given: str  # as on the command line (the example bot's name for a seat filled in)
    command: str  # what is run
    label: str  # the seat's name in the match (MatchStart, the replay's header)


def seat_bots(given: list[str], seats: int, examples: dict[str, str]) -> list[SeatBot]:
    """Every seat's bot: the commands given, an example bot's name standing for its command
    (`examples`), then the example bots (heuristic, then random) in the seats left over."""
    fill = ["heuristic", *["random"] * seats][: max(0, seats - len(given))]
    bots = []
    for text in [*given, *fill]:
        name = text.strip()
        if name in examples:
            bots.append(SeatBot(name, examples[name], name))
        else:
            bots.append(SeatBot(text, text, seat_label(text)))
    return bots


SCRIPT_SUFFIXES = {".py", ".js", ".mjs", ".cjs", ".ts", ".rb", ".pl", ".php", ".lua", ".jar", ".sh", ".exe"}


def seat_label(command: str) -> str:
    """A short name for a bot command: the module of `python -m MODULE`, else the script's file
    name (`python mybot.py`, `java -jar bot.jar`), else the program's (`./mybot`); of an in-process
    bot, its module's (or example's) name."""
    if command.startswith("inprocess:"):
        module = (command.removeprefix("inprocess:").split() or [""])[0].split(":")[0]
        return (Path(module).stem if module.endswith(".py") else module.rsplit(".", 1)[-1]) or "bot"
    try:
        words = shlex.split(command)
    except ValueError:  # unbalanced quotes: the launcher reports it
        return command.strip() or "bot"
    if words and Path(words[0]).name == "env":
        words = words[1:]
    while words and "=" in words[0] and not words[0].startswith("-"):  # env NAME=value ...
        words = words[1:]
    if not words:
        return command.strip() or "bot"
    program, rest = words[0], words[1:]
    if "-m" in rest[:-1]:
        return rest[rest.index("-m") + 1].rsplit(".", 1)[-1]
    for word in rest:
        if not word.startswith("-") and (Path(word).suffix in SCRIPT_SUFFIXES or Path(word).is_file()):
            return Path(word).name
    return Path(program).name


# --------------------------------------------------------------------------- what each seat did


@dataclass
class SeatReport:
    seat: int
    bot: SeatBot
    bot_name: str
    bot_version: str
    hellos: int
    faults: Counter[str]  # by kind, in the order they first came
    cause: str  # why it never said Hello, else its first fault's detail, else ""
    rejected: int
    exit_code: int | None  # None: it could not start, or was stopped at the end
    log: Path

    @property
    def failed(self) -> bool:
        """It never said Hello or it faulted: the match's exit status is SEAT_FAILED."""
        return self.hellos == 0 or bool(self.faults)

    @property
    def troubled(self) -> bool:
        """Anything went wrong with it: the summary names its log."""
        return self.failed or self.rejected > 0 or self.exit_code not in (0, None)

    @property
    def who(self) -> str:
        """The bot's own name and version from its Hello; the command when it never said Hello."""
        if self.hellos == 0 or not self.bot_name:
            return self.bot.given
        return f"{self.bot_name} {self.bot_version}" if self.bot_version else self.bot_name

    def faults_text(self) -> str:
        total = sum(self.faults.values())
        if not total:
            return "faults 0"
        return f"faults {total} ({', '.join(f'{kind} {n}' for kind, n in self.faults.items())})"

    def shown_log(self) -> Path | None:
        return self.log if self.troubled and self.log.exists() else None

    def to_json(self) -> dict[str, Any]:
        log = self.shown_log()
        return {
            "seat": self.seat,
            "label": self.bot.label,
            "command": self.bot.command,
            "hello": self.hellos > 0,
            "bot_name": self.bot_name,
            "bot_version": self.bot_version,
            "faults": sum(self.faults.values()),
            "fault_kinds": dict(self.faults),
            "rejected": self.rejected,
            "exit_code": self.exit_code,
            "log": str(log) if log is not None else None,
        }


def seat_reports(played: PlayResult, bots: list[SeatBot], replay_dir: Path) -> list[SeatReport]:
    runner = played.runner
    crashed = any(s.hellos == 0 or any(f.kind == "crash" for f in s.faults) for s in runner.seats)
    crashes = crash_details(runner.replay_path) if crashed and runner.replay_path else {}
    reports = []
    for seat, bot in zip(runner.seats, bots, strict=True):
        code = played.exit_codes[seat.index]
        if seat.hellos == 0:  # why: its process, else a Hello refused (a protocol fault), else time
            refused = next((f.detail for f in seat.faults if f.kind == "protocol"), "")
            cause = (
                crashes.get(seat.index)
                or refused
                or (
                    f"the bot process exited with status {code}"
                    if code is not None
                    else f"no Hello within {runner.config.start_timeout_s:g} s"
                )
            )
        elif seat.faults:
            first = seat.faults[0]
            cause = crashes.get(seat.index, first.detail) if first.kind == "crash" else first.detail
        else:
            cause = ""
        reports.append(
            SeatReport(
                seat=seat.index,
                bot=bot,
                bot_name=seat.bot_name,
                bot_version=seat.bot_version,
                hellos=seat.hellos,
                faults=Counter(fault.kind for fault in seat.faults),
                cause=cause,
                rejected=seat.rejected,
                exit_code=code,
                log=replay_dir / "bot-logs" / f"{runner.match_id}-seat{seat.index}.log",
            )
        )
    return reports


def crash_details(replay: Path) -> dict[int, str]:
    """Each seat's first `crashed` connection line's detail, from the replay log."""
    details: dict[int, str] = {}
    with replay.open(encoding="utf-8") as lines:
        for text in lines:
            if '"crashed"' in text:
                line = json.loads(text)
                if line.get("type") == "connection" and line.get("event") == "crashed":
                    details.setdefault(int(line["seat"]), str(line.get("detail", "")))
    return details


def last_line(log: Path, limit: int = 200) -> str:
    """The last line of a bot's log: after a traceback, what was raised."""
    try:
        with log.open("rb") as file:
            file.seek(0, 2)
            file.seek(max(0, file.tell() - 4096))
            lines = file.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return ""
    text = next((line.strip() for line in reversed(lines) if line.strip()), "")
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_cause(reports: list[SeatReport]) -> str | None:
    """One line: the first seat that never said Hello, else the first that faulted; None if none."""
    failed = [r for r in reports if r.hellos == 0] + [r for r in reports if r.hellos and r.faults]
    if not failed:
        return None
    report = failed[0]
    if report.hellos == 0:
        what = f"never said Hello: {report.cause}"
    else:
        total = sum(report.faults.values())
        kinds = ", ".join(f"{kind} {n}" for kind, n in report.faults.items())
        what = f"faulted {total} time{'s' if total > 1 else ''} ({kinds}); the first: {report.cause}"
    if report.exit_code not in (0, None) and (tail := last_line(report.log)):
        what += f"; its log ends: {tail}"
    text = f"seat {report.seat} ({report.who}) {what}"
    if report.log.exists():
        text += f"; log: {report.log}"
    if len(failed) > 1:
        text += f"; {len(failed) - 1} more seat{'s' if len(failed) > 2 else ''} failed (see the summary)"
    return " ".join(text.split())


def print_summary(runner: MatchRunner, reports: list[SeatReport]) -> None:
    print(f"{runner.config.variant.name}: match {runner.match_id}, {runner.termination}")
    names = [r.who + (" (no Hello)" if r.hellos == 0 else "") for r in reports]
    name_width = max(map(len, names))
    fault_width = max(len(r.faults_text()) for r in reports)
    for r, name in zip(reports, names, strict=True):
        line = (
            f"  seat {r.seat}  {runner.match.scores[r.seat]:>6}  {name:<{name_width}}  "
            f"{r.faults_text():<{fault_width}}  rejected {r.rejected}"
        )
        if (log := r.shown_log()) is not None:
            line += f"  log: {log}"
        print(line)
    print(f"replay: {runner.replay_path}")


# --------------------------------------------------------------------------- the command


def _cmd_play(args: argparse.Namespace) -> int:
    from ..logs import configure
    from ..referee.runner import MatchConfig
    from ..referee.seat import TimeControl
    from ..server.local import EXAMPLE_BOTS, play_match
    from .common import run_until_signalled

    variant = variant_of(args)
    if len(args.bot) > variant.seats:
        args.parser.error(f"{variant.name} has {variant.seats} seats, got {len(args.bot)} --bot")
    for text in args.bot:
        if text.startswith("inprocess:"):
            from ..server.inprocess import InProcessError, load_bot

            try:
                load_bot(text)
            except InProcessError as exc:
                args.parser.error(f"--bot {exc}")
            continue
        try:
            if not shlex.split(text):
                args.parser.error(f"--bot {text!r}: an empty command")
        except ValueError as exc:
            args.parser.error(f"--bot {text!r}: {str(exc).lower()}")
    output_dir(args.replay_dir, "--replay-dir")
    output_dir(args.replay_dir / "bot-logs", "--replay-dir")
    bots = seat_bots(args.bot, variant.seats, EXAMPLE_BOTS)
    configure(logging.INFO if args.verbose else logging.ERROR)  # the summary says what went wrong
    config = MatchConfig(
        variant=variant,
        deals=args.deals or variant.seats,
        seed=args.seed,
        seat_names=tuple(bot.label for bot in bots),
        time_control=TimeControl(
            args.per_decision_ms, args.bank_ms, args.increment_ms, args.latency_allowance_ms
        ),
        fault_policy=args.fault_policy,
    )
    unfinished = _unfinished(args.replay_dir)
    try:
        commands = [bot.command for bot in bots]
        stopped = run_until_signalled(play_match, config, commands, args.replay_dir, True)
    except* OSError as group:  # the replay folder cannot be made or written
        raise CliError(str(group.exceptions[0])) from None
    played = stopped.value
    if played is None:
        left = sorted(_unfinished(args.replay_dir) - unfinished)
        where = f"the unfinished replay: {left[0]}" if left else "no replay written"
        name = stopped.signal.name if stopped.signal is not None else "a signal"
        print(f"arena play: interrupted ({name}); {where}", file=sys.stderr)
        return stopped.exit_status
    runner = played.runner
    if played.stopped_seat is not None:
        problem = stopped_before_hello(played, bots[played.stopped_seat], args.replay_dir)
        if args.json:
            print(
                dump(
                    {
                        "match_id": runner.match_id,
                        "variant": variant.name,
                        "termination": runner.termination,
                        "stopped_seat": played.stopped_seat,
                        "exit_status": SEAT_FAILED,
                        "problem": problem,
                    }
                )
            )
            sys.stdout.flush()
        print(f"arena play: {problem}", file=sys.stderr)
        return SEAT_FAILED
    if runner.replay_path is None:
        raise CliError(f"match {runner.match_id} was aborted; no replay written")
    reports = seat_reports(played, bots, args.replay_dir)
    cause = first_cause(reports)
    status = SEAT_FAILED if cause is not None else OK
    if args.json:
        summary = {
            "match_id": runner.match_id,
            "variant": variant.name,
            "termination": runner.termination,
            "scores": list(runner.match.scores),
            "faults": [sum(r.faults.values()) for r in reports],
            "replay": str(runner.replay_path),
            "seats": [r.to_json() for r in reports],
            "exit_status": status,
            "problem": cause,
        }
        print(dump(summary))
    else:
        print_summary(runner, reports)
    sys.stdout.flush()  # the summary before the cause, on a terminal showing both
    if cause is not None:
        print(f"arena play: {cause}", file=sys.stderr)
    return stopped.exit_status or status


def stopped_before_hello(played: PlayResult, bot: SeatBot, replay_dir: Path) -> str:
    """One line: which seat's bot ended before its Hello, why, the end of its log, and its path."""
    seat = played.stopped_seat
    assert seat is not None
    code = played.exit_codes[seat]
    cause = played.stopped_cause or f"the bot process exited with status {code}"
    text = f"seat {seat} ({bot.given}) never said Hello: {cause}; the match was stopped unplayed"
    log = replay_dir / "bot-logs" / f"{played.runner.match_id}-seat{seat}.log"
    if code not in (0, None) and (tail := last_line(log)):
        text += f"; its log ends: {tail}"
    if log.exists() and log.stat().st_size:
        text += f"; log: {log}"
    return " ".join(text.split())


def _unfinished(replay_dir: Path) -> set[Path]:
    return set(replay_dir.glob("*.jsonl.part")) if replay_dir.is_dir() else set()
