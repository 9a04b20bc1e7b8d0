"""The progress line of `arena ladder run`, and log lines that do not tear it.

On a terminal the progress bar is redrawn in place on standard error; each log line clears it,
is written, and the bar is drawn again below it. Elsewhere there is no bar: the
``match recorded`` log lines carry the same numbers.
"""

from __future__ import annotations

import logging
import time
from collections.abc import MutableMapping
from typing import Any, TextIO

import structlog

from ..logs import configure

CLEAR = "\r\x1b[K"


def duration(seconds: float) -> str:
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes:02d}m"
    return f"{minutes}m{secs:02d}s" if minutes else f"{secs}s"


class Progress:
    def __init__(self, total: int, done: int, out: TextIO, bar: bool, width: int = 24) -> None:
        self.total = total
        self.done = done
        self.done_at_start = done
        self.out = out
        self.bar = bar
        self.width = width
        self.started = time.monotonic()
        self.leader: tuple[str, float] | None = None
        self._shown = False
        self._closed = False

    def advance(self, leader: tuple[str, float] | None) -> None:
        self.done += 1
        self.leader = leader
        self.draw()

    def per_minute(self) -> float | None:
        played = self.done - self.done_at_start
        elapsed = time.monotonic() - self.started
        return played * 60 / elapsed if played and elapsed > 0 else None

    def eta_seconds(self) -> float | None:
        rate = self.per_minute()
        return (self.total - self.done) * 60 / rate if rate else None

    def fields(self) -> dict[str, Any]:
        rate, eta = self.per_minute(), self.eta_seconds()
        return {
            "done": self.done,
            "total": self.total,
            "per_min": round(rate, 2) if rate is not None else None,
            "eta_s": round(eta) if eta is not None else None,
            "leader": self.leader[0] if self.leader else None,
        }

    def render(self) -> str:
        filled = self.width * self.done // self.total if self.total else self.width
        rate, eta = self.per_minute(), self.eta_seconds()
        parts = [
            f"[{'#' * filled}{'-' * (self.width - filled)}] {self.done}/{self.total} matches",
            f"{rate:.1f}/min" if rate is not None else "–/min",
            f"ETA {duration(eta)}" if eta is not None else "ETA –",
        ]
        if self.leader is not None:
            parts.append(f"leader {self.leader[0]} ({self.leader[1]:.1f})")
        return "  ".join(parts)

    def draw(self) -> None:
        if self.bar and not self._closed:
            self.out.write(CLEAR + self.render())
            self.out.flush()
            self._shown = True

    def clear(self) -> None:
        if self._shown:
            self.out.write(CLEAR)
            self._shown = False

    def finish(self) -> None:
        """Leave the last bar on screen and draw no more."""
        self._closed = True
        if self._shown:
            self.out.write("\n")
            self.out.flush()
            self._shown = False


class BarStream:
    """A text stream for log lines that keeps the progress bar below them."""

    def __init__(self, progress: Progress | None, out: TextIO) -> None:
        self.progress = progress
        self.out = out
        self._buffer = ""

    def write(self, text: str) -> int:
        self._buffer += text
        if "\n" in self._buffer:
            lines, _, self._buffer = self._buffer.rpartition("\n")
            if self.progress is not None:
                self.progress.clear()
            self.out.write(lines + "\n")
            if self.progress is not None:
                self.progress.draw()
            self.out.flush()
        return len(text)

    def flush(self) -> None:
        self.out.flush()


def _concise(verbose: bool) -> structlog.typing.Processor:
    """Without --verbose only the ladder's own lines and errors: the referee's per-match and
    per-fault lines would drown them (the database and the replays keep every fault)."""

    def keep(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        if (
            not verbose
            and event.get("component") != "ladder"
            and method not in ("error", "critical", "exception")
        ):
            raise structlog.DropEvent
        return event

    return keep


def configure_logging(stream: BarStream, verbose: bool = False) -> None:
    configure(logging.INFO)
    processors = list(structlog.get_config()["processors"])
    structlog.configure(
        processors=[_concise(verbose), *processors],
        logger_factory=structlog.PrintLoggerFactory(stream),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
