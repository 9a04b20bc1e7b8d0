"""What every `arena` command shares: the user-error exception, the argument types (one parser
per kind of input: whole numbers, ports, addresses, paths to write, files to read), and how a
trio command stops on SIGINT or SIGTERM (`run_until_signalled`)."""

from __future__ import annotations

import argparse
import json
import os
import signal
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from signal import Signals
from typing import Any, Generic, TypeVar

from ..engine import VARIANT_NAMES, ConfigError, Variant, find_variant
from ..files import InputFileError, Kind, OutputPathError, check_kind, check_output_dir, check_output_file

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


def _whole(text: str, least: int, expected: str, most: int | None = None) -> int:
    body = text.removeprefix("-")
    # ASCII digits only (`int` also takes "²", "٣", "1_000" and spaces), and not 4,300 of them
    if not (body.isascii() and body.isdigit() and len(body) <= 40):
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}")
    value = int(text)
    if value < least or (most is not None and value > most):
        raise argparse.ArgumentTypeError(f"expected {expected}, got {value}")
    return value


def positive_int(text: str) -> int:
    return _whole(text, 1, "a number of at least 1")


def index(text: str) -> int:
    """A position counted from 0 (a deal, a seat, a step)."""
    return _whole(text, 0, "a number of 0 or more")


def milliseconds(text: str) -> int:
    """A duration in milliseconds, 0 or more."""
    return _whole(text, 0, "a number of milliseconds, 0 or more")


# --------------------------------------------------------------------------- ports and addresses

PORT_MAX = 65535


def port(text: str) -> int:
    """A port to dial: 1-65535."""
    return _whole(text, 1, f"a port from 1 to {PORT_MAX}", PORT_MAX)


def listen_port(text: str) -> int:
    """A port to listen on: 1-65535, or 0 for a free one."""
    return _whole(text, 0, f"a port from 1 to {PORT_MAX}, or 0 for a free one", PORT_MAX)


SCHEMES = ("grpc://", "http://", "grpcs://", "https://", "tls://")
ADDRESS_HELP = "HOST:PORT (e.g. 127.0.0.1:50051, [::1]:50051) or unix:PATH"


def address_problem(text: str, least_port: int = 1, unix: bool = True) -> str | None:
    """What is wrong with a server address, or None. An address is HOST:PORT (an IPv6 host in
    brackets; grpc://, http://, grpcs://, https:// or tls:// in front) or unix:PATH: a port is never
    implied (gRPC would dial 443). The command line (arena/cli/common.py) and the Python SDK
    (clients/python/arena_bot/address.py) have this same function; tests/cli/test_bad_input.py
    holds them to it."""
    if unix and text.startswith("unix:"):
        return None if text.removeprefix("unix:").removeprefix("//") else "no path after unix:"
    rest = next((text[len(s) :] for s in SCHEMES if text.startswith(s)), text)
    if not rest.strip():
        return "no address"
    if rest != rest.strip():
        return "spaces around the address"
    if rest.startswith("["):
        host, bracket, tail = rest[1:].partition("]")
        if not bracket:
            return "no ']' after the IPv6 address"
        if not tail.startswith(":"):
            return "no port after the IPv6 address"
        number = tail[1:]
    else:
        host, colon, number = rest.rpartition(":")
        if not colon:
            return "no port"
        if ":" in host:
            return "an IPv6 address needs brackets, e.g. [::1]:50051"
    if not host:
        return "no host before the port"
    if any(c.isspace() or c in "/?#@" for c in host):
        return f"{host!r} is not a host name"
    if not number:
        return "no port after the ':'"
    if not (number.isascii() and number.isdigit()):
        return f"the port {number!r} is not a number"
    if not least_port <= int(number) <= PORT_MAX:
        lowest = "0 (a free one)" if least_port == 0 else str(least_port)
        return f"the port {int(number)} is not from {lowest} to {PORT_MAX}"
    return None


def host_port(text: str) -> tuple[str, int]:
    """An address `address_problem` accepts without unix:, as (host, port); IPv6 without brackets."""
    rest = next((text[len(s) :] for s in SCHEMES if text.startswith(s)), text)
    host, _, number = rest.rpartition(":")
    return host.removeprefix("[").removesuffix("]"), int(number)


def address(text: str) -> str:
    """A server address to dial or to advertise (`address_problem`)."""
    problem = address_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: {problem}; expected {ADDRESS_HELP}")
    return text


def listen_address(text: str) -> tuple[str, int]:
    """HOST:PORT to listen on (port 0: a free one), as (host, port)."""
    problem = address_problem(text, least_port=0, unix=False)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{text!r}: {problem}; expected HOST:PORT, e.g. 127.0.0.1:8080")
    return host_port(text)


def host_name(text: str) -> str:
    """A host to listen on, without a port (that is --port's)."""
    if not text or text != text.strip() or "/" in text:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a host name or IP address, e.g. 127.0.0.1")
    if text.count(":") == 1 or (text.startswith("[") and "]:" in text):
        raise argparse.ArgumentTypeError(f"{text!r}: give the host alone and the port with --port")
    return text.removeprefix("[").removesuffix("]")


# --------------------------------------------------------------------------- files


def output_dir(path: Path, option: str) -> None:
    """Make the folder an option names, or end the command (status 1) saying why it cannot be
    written: before the work that would write there starts."""
    try:
        check_output_dir(path)
    except OutputPathError as exc:
        raise CliError(f"{option} {exc}") from None


def output_file(path: Path, option: str) -> None:
    """Check a file an option names can be written, before the work that writes it starts."""
    try:
        check_output_file(path)
    except OutputPathError as exc:
        raise CliError(f"{option} {exc}") from None


def input_kind(path: Path, expected: Kind, option: str = "") -> None:
    """End the command (status 1) when `path` is a folder or another kind of the arena's files,
    naming what it is and which command reads it."""
    try:
        check_kind(path, expected)
    except InputFileError as exc:
        raise CliError(f"{option} {exc}".strip()) from None


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
