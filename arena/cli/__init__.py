"""The `arena` command: every subcommand's arguments, and how a command ends.

Each module of this package registers its subcommands (`register(commands)`) and runs them by
calling into the layers below; the work itself lives there (docs/ARCHITECTURE.md).

Exit status: 0 on success, 1 for a bad input file (one line on stderr), 2 for a
wrong command line (argparse's usage message).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

from .. import __version__
from .common import CliError

# In the order `arena --help` lists them. Each module has `register(commands)`, adding its
# subparsers with `run` and `parser` defaults; a command imports what it drives only when it runs.
COMMAND_MODULES: tuple[str, ...] = (
    "arena.cli.rules",
    "arena.cli.bench",
    "arena.cli.serve",
    "arena.cli.play",
    "arena.cli.ladder",
    "arena.cli.conformance",
    "arena.cli.replay",
    "arena.cli.standing",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="arena",
        description="Grosstarock Arena: rules engine tools for the Grosstarock family of tarot games.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except CliError as exc:
        message = " ".join(str(exc).split())
        print(f"arena {args.command}: {message}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # The reader went away (e.g. `| head`): stop quietly, and keep the interpreter
        # from failing again when it flushes stdout at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 1
    except KeyboardInterrupt:
        return 130
    return status
