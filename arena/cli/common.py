"""What every `arena` command shares: the user-error exception and the argument types."""

from __future__ import annotations

import argparse
import json
import os
from typing import Any

from ..engine import VARIANT_NAMES, ConfigError, Variant, find_variant


class CliError(Exception):
    """A user error that ends the command with exit status 1 and one line on stderr."""


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


def add_variant_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--variant", required=True, metavar="V", help="variant id, e.g. grosstarock, danish")
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
