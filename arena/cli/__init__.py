"""The `arena` command: every subcommand's arguments, and how a command ends.

Each module of this package registers its subcommands (`register(commands)`) and runs them by
calling into the layers below; the work itself lives there (docs/ARCHITECTURE.md).

Exit status: 0 on success, 1 for a bad input file or a port that cannot be listened on (one
line on stderr), 2 for a wrong command line (argparse's usage message), 130 when interrupted
(Ctrl-C) and 143 when terminated (SIGTERM), without a traceback. SIGTERM takes the path of
Ctrl-C: a command cleans up as it would on Ctrl-C (bot processes stopped, replay logs closed).
`arena serve` stops gracefully on either and exits 0.
"""

from __future__ import annotations

import argparse
import importlib
import os
import signal
import sys
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from types import FrameType

from .. import __version__
from .common import CliError

# In the order `arena --help` lists them. Each module has `register(commands)`, adding its
# subparsers with `run` and `parser` defaults; a command imports what it drives only when it runs.
COMMAND_MODULES: tuple[str, ...] = (
    "arena.cli.rules",
    "arena.cli.serve",
    "arena.cli.play",
    "arena.cli.ladder",
    "arena.cli.conformance",
    "arena.cli.replay",
    "arena.cli.standing",
    "arena.cli.bots",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Grosstarock Arena: a referee server for bots that play the Grosstarock family "
        "of tarot games. Play matches between bots, serve a standing arena, run ladders, and replay "
        "and check matches move by move.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra:  # said by the command's own parser, with its usage (argparse would show the top one)
        leaf: argparse.ArgumentParser = getattr(args, "parser", parser)
        leaf.error(f"unrecognized arguments: {' '.join(extra)}")
    terminated: list[int] = []
    try:
        with _sigterm_as_interrupt(terminated):
            status: int = args.run(args)
    except CliError as exc:
        return _fail(args, exc)
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, and keep the interpreter
        # from failing again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except (KeyboardInterrupt, BaseExceptionGroup, OSError) as exc:
        # trio wraps an interrupt, and an error of a task, in exception groups
        leaves = [leaf for leaf in _leaves(exc) if not _is_cancellation(leaf)]
        if not leaves:
            return 143 if terminated else 130
        if len(leaves) == 1 and isinstance(leaves[0], CliError | _listen_error()):
            return _fail(args, leaves[0])
        raise
    return status


def _fail(args: argparse.Namespace, exc: BaseException) -> int:
    """One line on stderr, after the command's full name (`arena ladder run: …`); status 1."""
    parser = getattr(args, "parser", None)
    name = parser.prog if isinstance(parser, argparse.ArgumentParser) else f"arena {args.command}"
    message = " ".join(str(exc).split())
    print(f"{name}: {message}", file=sys.stderr)
    return 1


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for each in exc.exceptions for leaf in _leaves(each)]
    return [exc]


def _is_cancellation(exc: BaseException) -> bool:
    trio = sys.modules.get("trio")  # loaded if anything could have raised its Cancelled
    return isinstance(exc, KeyboardInterrupt) or (trio is not None and isinstance(exc, trio.Cancelled))


def _listen_error() -> type[BaseException]:
    """`arena.server.app.ListenError` (a port that cannot be bound), without loading gRPC for it:
    only a command that loaded that module can have raised one."""
    app = sys.modules.get("arena.server.app")
    error: type[BaseException] = app.ListenError if app is not None else CliError
    return error


@contextmanager
def _sigterm_as_interrupt(terminated: list[int]) -> Iterator[None]:
    """While a command runs, SIGTERM does what Ctrl-C does (through SIGINT's handler of the
    moment, trio's included); `terminated` records it for the exit status. A command that
    handles both itself (`run_until_signalled`) replaces this while it runs."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(number: int, frame: FrameType | None) -> None:
        terminated.append(number)
        handler = signal.getsignal(signal.SIGINT)
        if callable(handler):
            handler(signal.SIGINT, frame)
        else:
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
