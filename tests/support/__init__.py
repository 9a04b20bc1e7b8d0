"""Helpers shared by the tests: the repository's paths, the `arena` command, a free port, decks that
deal chosen hands, actions by text, waiting for a condition.

Every test folder imports this module as `support` (tests/conftest.py puts tests/ on the path)."""

from __future__ import annotations

import contextlib
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from arena.engine import CARDS, Action, Card, CardError, DealState, Variant, find_variant

ROOT = Path(__file__).resolve().parents[2]  # the repository
BOTS = ROOT / "tests" / "bots"  # bot scripts the tests start as processes
SDK = ROOT / "clients" / "python"


def arena(*args: str | Path, timeout: float = 180) -> subprocess.CompletedProcess[str]:
    """The `arena` command line run as a user would, in a process of its own (any exit status)."""
    command = [sys.executable, "-m", "arena", *map(str, args)]
    return subprocess.run(command, capture_output=True, text=True, timeout=timeout, check=False)


def free_port() -> int:
    """A TCP port on the loopback that was free a moment ago."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def deal_order(variant: Variant, dealer: int) -> tuple[int, int, int]:
    """(forehand, middlehand, dealer) for `dealer`, the order in which G-DEAL-1 deals."""
    return DealState(variant, dealer, list(CARDS)).order


def deck_for_hands(variant: Variant, dealer: int, hands: Mapping[int, Iterable[str]]) -> list[Card]:
    """A deck that deals each listed seat at least the given cards (G-DEAL-1).

    Unlisted cards fill the remaining places in canonical order; a seat given a
    full hand (25, or 28 for the dealer) gets exactly that hand.
    """
    order = deal_order(variant, dealer)
    positions: dict[int, list[int]] = {seat: [] for seat in order}
    for r in range(5):
        for k, seat in enumerate(order):
            positions[seat].extend(range(15 * r + 5 * k, 15 * r + 5 * k + 5))
    positions[dealer].extend(range(75, 78))
    deck: list[Card | None] = [None] * 78
    used: set[Card] = set()
    for seat, codes in hands.items():
        cards = [Card.parse(c) for c in codes]
        if len(cards) > len(positions[seat]):
            raise ValueError(f"seat {seat} gets {len(positions[seat])} cards, not {len(cards)}")
        for pos, card in zip(positions[seat], cards, strict=False):
            if card in used:
                raise ValueError(f"{card} given twice")
            deck[pos] = card
            used.add(card)
    rest = iter(c for c in CARDS if c not in used)
    return [c if c is not None else next(rest) for c in deck]


def new_deal(name: str, hands: Mapping[int, Iterable[str]], dealer: int = 0, **kwargs: object) -> DealState:
    options = {k: str(v) for k, v in kwargs.pop("options", {}).items()}  # type: ignore[attr-defined]
    variant = find_variant(name, options)
    return DealState(variant, dealer, deck_for_hands(variant, dealer, hands), **kwargs)  # type: ignore[arg-type]


def act(state: DealState, *texts: str) -> None:
    """Apply actions given in text form (``"play SK"``, ``"discard H5"``, ``"pass"``)."""
    for text in texts:
        state.apply(Action.parse(text))


def legal(state: DealState) -> set[str]:
    return {str(a) for a in state.legal_actions()}


def finish_randomly(state: DealState, seed: int = 0) -> DealState:
    rng = random.Random(seed)
    while not state.is_terminal():
        state.apply(rng.choice(state.legal_actions()))
    return state


def cards_in(value: Any) -> set[Card]:
    """Every card code anywhere in a JSON-like value (strings are split into words)."""
    found: set[Card] = set()
    if isinstance(value, str):
        for word in value.replace(":", " ").split():
            with contextlib.suppress(CardError):
                found.add(Card.parse(word))
    elif isinstance(value, dict):
        for item in value.values():
            found |= cards_in(item)
    elif isinstance(value, list):
        for item in value:
            found |= cards_in(item)
    return found


def wait_for(condition: Callable[[], Any], timeout: float, what: str, poll: float = 0.05) -> Any:
    """`condition()`'s first truthy value, asked every `poll` seconds; an AssertionError naming
    `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(poll)
    raise AssertionError(f"timed out waiting for {what}")


T = TypeVar("T")


def in_thread(fn: Callable[[], T], what: str = "the client", timeout: float = 15.0) -> T:
    """`fn()`'s result (or its exception), run in a thread of its own; an AssertionError naming
    `what` if it has not returned after `timeout` seconds. For blocking clients under test."""
    box: dict[str, Any] = {}

    def target() -> None:
        try:
            box["result"] = fn()
        except BaseException as exc:  # handed to the test
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(timeout)
    assert not thread.is_alive(), f"{what} did not return"
    if "error" in box:
        raise box["error"]
    result: T = box["result"]
    return result
