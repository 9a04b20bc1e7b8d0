"""The progress bar of the long jobs, drawn by rich on standard error, with log lines above it.

The bar is drawn only when standard error is a terminal; elsewhere (a pipe, a file, CI) nothing
is drawn and the log lines are exactly those of `arena.logs.configure`. On a terminal the
structlog lines, and what the job writes meanwhile to stderr (and to stdout when it is a
terminal too), are printed through the same rich Console, above the bar, so they do not tear it.
"""

from __future__ import annotations

import sys
import time
from collections.abc import MutableMapping
from datetime import timedelta
from typing import Any

import structlog
from rich.console import Console
from rich.file_proxy import FileProxy
from rich.progress import BarColumn, Progress, ProgressColumn, Task
from rich.table import Column
from rich.text import Text

# soft_wrap: lines printed above the bar are left for the terminal to wrap, as without a bar.
# force_terminal from stderr itself: rich would otherwise take FORCE_COLOR in the environment as
# a terminal and draw bars into pipes and log files.
console = Console(stderr=True, soft_wrap=True, force_terminal=sys.stderr.isatty())


def _pace(task: Task) -> tuple[float | None, float | None]:
    """Steps per second since the bar started (steps done before do not count), seconds left."""
    done, elapsed = task.completed - task.fields["first"], task.elapsed or 0.0
    rate = done / elapsed if done > 0 and elapsed > 0 else None
    return rate, ((task.total or 0) - task.completed) / rate if rate else None


class _Status(ProgressColumn):
    """The text beside the bar, cut short (…) rather than wrapped on a narrow terminal."""

    def render(self, task: Task) -> Text:
        rate, left = _pace(task)
        per, scale = ("min", 60) if task.fields["per_minute"] else ("s", 1)
        total = int(task.total or 0)
        text = (
            f"{int(task.completed):{len(str(total))}d}/{total} {task.description}  "
            f"{'–' if rate is None else f'{rate * scale:.1f}'}/{per}  "
            f"elapsed {timedelta(seconds=round(task.elapsed or 0))}  "
            f"ETA {'–' if left is None else timedelta(seconds=round(left))}  {task.fields['note']}"
        )
        return Text(text.rstrip(), no_wrap=True, overflow="ellipsis")


class Bar:
    """`done/total unit`, the rate (per second, or per minute), the time elapsed and left at
    that rate, and a note.

    Use as `with Bar(unit).start(total) as bar: ... bar.advance()`. Drawn only with `show` on a
    terminal; hidden, it still keeps the counts for `fields()`."""

    def __init__(
        self,
        unit: str,
        *,
        per_minute: bool = False,
        show: bool = True,
        transient: bool = False,
        on: Console | None = None,
    ) -> None:
        self.console = on or console
        self.shown = show and self.console.is_interactive
        self.progress = Progress(
            BarColumn(bar_width=24),
            _Status(table_column=Column(no_wrap=True)),  # the bar shrinks first on a narrow terminal
            console=self.console,
            auto_refresh=False,  # no drawing thread: refreshed by `advance` and `refresh`
            transient=transient,
            disable=not self.shown,
            redirect_stdout=sys.stdout.isatty(),  # stdout to a file or a pipe is never touched
        )
        self.task = self.progress.add_task(unit, start=False, first=0, note="", per_minute=per_minute)
        self._drawn = 0.0

    def start(self, total: int, done: int = 0, note: str = "") -> Bar:
        self.progress.update(self.task, total=total, completed=done, first=done, note=note)
        self.progress.start_task(self.task)
        self.progress.start()
        return self

    def advance(self, note: str | None = None, done: int | None = None) -> None:
        """One more step done (or `done` in all), with a new note if given."""
        fields: dict[str, Any] = {} if note is None else {"note": note}
        self.progress.update(self.task, completed=done, advance=1 if done is None else None, **fields)
        if time.monotonic() - self._drawn >= 0.1:
            self.refresh()

    def refresh(self) -> None:
        self._drawn = time.monotonic()
        self.progress.refresh()

    def fields(self) -> dict[str, Any]:
        task = self.progress.tasks[0]
        rate, left = _pace(task)
        return {
            "done": int(task.completed),
            "total": int(task.total or 0),
            "per_min": round(rate * 60, 2) if rate is not None else None,
            "eta_s": round(left) if left is not None else None,
        }

    def stop(self) -> None:  # the bar stays on screen, unless transient
        self.progress.stop()

    def __enter__(self) -> Bar:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _only(component: str) -> structlog.typing.Processor:
    def keep(logger: Any, method: str, event: MutableMapping[str, Any]) -> MutableMapping[str, Any]:
        if event.get("component") != component and method not in ("error", "critical", "exception"):
            raise structlog.DropEvent
        return event

    return keep


def route_logs(only: str | None = None, on: Console | None = None) -> None:
    """After `arena.logs.configure`: its lines printed through the console, above a bar, on a
    terminal (elsewhere as they were); with `only`, that component's lines and errors only."""
    on = on or console
    processors = list(structlog.get_config()["processors"])
    stream = FileProxy(on, sys.stderr) if on.is_terminal else sys.stderr
    structlog.configure(
        processors=[_only(only), *processors] if only else processors,
        logger_factory=structlog.WriteLoggerFactory(stream),  # type: ignore[arg-type]  # one write a line (arena.logs)
        cache_logger_on_first_use=False,
    )
