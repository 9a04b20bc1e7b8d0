"""What every `arena` command shares: the user-error exception, the argument types, and how a
trio command stops on SIGINT or SIGTERM (`run_until_signalled`)."""

from __future__ import annotations

import argparse
import json
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from signal import Signals
from typing import Any, Generic, TypeVar

from ..engine import VARIANT_NAMES, ConfigError, Variant, find_variant

T = TypeVar("T")


class CliError(Exception):
    """A user error that ends the command with exit status 1 and one line on stderr."""


@dataclass(frozen=True)
class Stopped(Generic[T]):
    """How `run_until_signalled` ended.

    `value` is what the function returned (None when it was cut off); `signal` is the first
    SIGINT or SIGTERM received (None when none came). `exit_status` is the shell's convention
    for a command ended by a signal: 130 after SIGINT, 143 after SIGTERM, 0 without one."""

    value: T | None
    signal: Signals | None = None

    @property
    def interrupted(self) -> bool:
        return self.signal is not None

    @property
    def exit_status(self) -> int:
        return 128 + self.signal.value if self.signal is not None else 0


def run_until_signalled(async_fn: Callable[..., Awaitable[T]], *args: Any) -> Stopped[T]:
    """`trio.run(async_fn, *args)`, cancelled cleanly on the first SIGINT (Ctrl-C) or SIGTERM.

    The function runs in the main task inside a cancel scope. The first SIGINT or SIGTERM
    cancels that scope: the function's `finally` blocks and nurseries unwind as for any trio
    cancellation (`play_matches` stops its bot processes, a match's replay stays `.jsonl.part`;
    `serve` stops gRPC and aborts its matches), and this returns `Stopped(None, signal)` instead
    of raising. Further signals while it unwinds are ignored: the unwinding is bounded (a few
    seconds) and must finish for nothing to be left running. Without a signal it returns
    `Stopped(value)`. If the function returns a value although a signal came (it finished
    first, or swallowed the cancellation), both are set.

    An exception of the function is raised as it is, not wrapped in an exception group. Use
    `functools.partial` for keyword arguments. Call it from the main thread, where trio may
    install signal handlers; they are the process's own again when it returns.

    Typical use in a command: `stopped = run_until_signalled(play_match, config, bots, d)`;
    `if stopped.value is None: …report the cut-off match…; return stopped.exit_status`
    (130 after Ctrl-C, 143 after SIGTERM)."""
    import trio

    async def main() -> Stopped[T]:
        received: list[Signals] = []
        value: T | None = None
        error: Exception | None = None
        work = trio.CancelScope()

        async def watch(signals: Any) -> None:
            async for number in signals:
                if not received:
                    received.append(Signals(number))
                    work.cancel()

        with trio.open_signal_receiver(signal.SIGINT, signal.SIGTERM) as signals:
            async with trio.open_nursery() as nursery:
                nursery.start_soon(watch, signals)
                try:
                    with work:
                        value = await async_fn(*args)
                except Exception as exc:  # raised below, not wrapped in the nursery's group
                    error = exc
                finally:
                    nursery.cancel_scope.cancel()
        if error is not None:
            raise error
        return Stopped(value, received[0] if received else None)

    return trio.run(main)


def option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    key, value = key.strip(), value.strip()
    if not sep or not key or not value:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    return key, value


def _whole(text: str, least: int, expected: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < least:
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def positive_int(text: str) -> int:
    return _whole(text, 1, "a number of at least 1")


def index(text: str) -> int:
    """A position counted from 0 (a deal, a seat, a step)."""
    return _whole(text, 0, "a number of 0 or more")


def seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not 0 <= value < float("inf"):
        raise argparse.ArgumentTypeError(f"expected a non-negative number of seconds, got {text!r}")
    return value


def cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)


def add_variant_arguments(
    parser: argparse.ArgumentParser, required: bool = True, help: str = "variant id, e.g. grosstarock, danish"
) -> None:
    parser.add_argument("--variant", required=required, metavar="V", help=help)
    parser.add_argument(
        "--option",
        action="append",
        type=option,
        default=[],
        metavar="KEY=VALUE",
        help="variant option, repeatable (e.g. --option ladons=all_blanks)",
    )


def variant_list(text: str) -> tuple[str, ...]:
    """A comma-separated list of variant ids."""
    names = tuple(v.strip() for v in text.split(",") if v.strip())
    unknown = [v for v in names if v not in VARIANT_NAMES]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown variant {unknown[0] if unknown else text!r}; known: {', '.join(VARIANT_NAMES)}"
        )
    return names


def variant_of(args: argparse.Namespace) -> Variant:
    """Resolve --variant and --option; a bad name or option is a command-line error (exit 2)."""
    try:
        return find_variant(args.variant, dict(getattr(args, "option", [])))
    except ConfigError as exc:
        parser: argparse.ArgumentParser = args.parser
        parser.error(str(exc))


def dump(obj: Any) -> str:
    """One line of compact JSON."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)
