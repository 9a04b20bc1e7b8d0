"""What every bench shares: timing, ratios, process readers, percentiles, driver processes, output."""

from __future__ import annotations

import json
import math
import os
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.progress import Bar

# --------------------------------------------------------------------------- timing


@dataclass(frozen=True, slots=True)
class Timed:
    """What a timed loop did: the sum of its steps' counts, the steps, and the seconds it took."""

    count: int = 0
    steps: int = 0
    seconds: float = 0.0

    @property
    def rate(self) -> float:
        return rate(self.count, self.seconds)

    def __add__(self, other: Timed) -> Timed:
        return Timed(self.count + other.count, self.steps + other.steps, self.seconds + other.seconds)


def run_for(seconds: float, step: Callable[[], int]) -> Timed:
    """Call `step` until `seconds` have passed and add up what it returns (say, actions).

    Whole steps only: the clock is read between steps, so the loop overshoots by at most one.
    """
    clock = time.perf_counter
    count = steps = 0
    start = clock()
    deadline = start + seconds
    while clock() < deadline:
        count += step()
        steps += 1
    return Timed(count, steps, clock() - start)


def alternate(seconds: float, sides: Mapping[str, Callable[[], int]], slice_s: float) -> dict[str, Timed]:
    """`run_for` each side for `seconds` in all, taking turns of at most `slice_s` (and at most half
    of `seconds`), so that a machine that gets busier or quieter during the run affects them alike."""
    slice_s = min(slice_s, seconds / 2)
    timed = {name: Timed() for name in sides}
    while any(t.seconds < seconds for t in timed.values()):
        for name, step in sides.items():
            if timed[name].seconds < seconds:
                timed[name] += run_for(slice_s, step)
    return timed


class Window:
    """A measured window, as `with Window(...) as window:` around the wait.

    At its start and its end it reads the monotonic and the wall clock, `count()` (say, decisions
    so far) and the CPU time of the processes `pids`; afterwards `seconds`, `count`, `rate` and
    `cpu_s` (per process) are the differences.
    """

    def __init__(self, count: Callable[[], int] | None = None, pids: Sequence[int] = ()) -> None:
        self._count = count or (lambda: 0)
        self.pids = list(pids)
        self.started = self.ended = 0.0  # time.monotonic()
        self.started_wall = self.ended_wall = 0.0  # time.time()
        self.count = 0
        self.cpu_s: list[float] = []

    def __enter__(self) -> Window:
        self.count = self._count()
        self.cpu_s = [process_cpu_s(pid) for pid in self.pids]
        self.started, self.started_wall = time.monotonic(), time.time()
        return self

    def __exit__(self, *exc: object) -> None:
        self.ended, self.ended_wall = time.monotonic(), time.time()
        self.count = self._count() - self.count
        self.cpu_s = [process_cpu_s(pid) - before for pid, before in zip(self.pids, self.cpu_s, strict=True)]

    @property
    def seconds(self) -> float:
        return self.ended - self.started

    @property
    def rate(self) -> float:
        return rate(self.count, self.seconds)

    def contains(self, monotonic: float) -> bool:
        return self.started <= monotonic <= self.ended

    def contains_wall(self, wall: float) -> bool:
        return self.started_wall <= wall <= self.ended_wall


def pauses(seconds: float, bar: str | None = None) -> Iterator[float]:
    """How to sleep through a measured window of `seconds`: at once, or with `bar`, a quarter
    second at a time under a progress bar of the window's seconds labelled `bar` (`arena.progress`:
    drawn on stderr when it is a terminal, cleared at the end).

    `for pause in pauses(s, bar): time.sleep(pause)`, or `await trio.sleep(pause)`.
    """
    if bar is None:
        yield seconds
        return
    total = max(1, math.ceil(seconds))
    end = time.monotonic() + seconds
    with Bar(bar, transient=True).start(total) as progress:
        while (left := end - time.monotonic()) > 0:
            yield min(left, 0.25)
            progress.advance(done=min(total, math.floor(seconds - max(0.0, end - time.monotonic()))))
        progress.advance(done=total)


# --------------------------------------------------------------------------- ratios and percentiles


def rate(count: float, seconds: float) -> float:
    """`count` per second; 0 for no time."""
    return count / seconds if seconds > 0 else 0.0


def ratio(value: float, base: float, digits: int = 3) -> float:
    """`value / base`, rounded; 0 when there is no base to compare with."""
    return round(value / base, digits) if base > 0 else 0.0


def percentile(values: Sequence[float], p: float) -> float:
    """The nearest-rank percentile; 0 for no values."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return float(ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)])


# --------------------------------------------------------------------------- processes


def process_cpu_s(pid: int) -> float:
    """User plus system CPU time of process `pid` (every thread), from /proc."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def rss_kib(pid: int | None = None) -> int:
    """Resident memory of process `pid` (default: this one), from /proc; 0 once it is gone."""
    try:
        with open(f"/proc/{pid or 'self'}/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


class RssSampler:
    """A process's resident memory every `every_s`, on a thread, as (monotonic time, KiB)."""

    def __init__(self, pid: int, every_s: float) -> None:
        self.pid = pid
        self.every_s = every_s
        self.samples: list[tuple[float, int]] = []
        self._stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            kib = rss_kib(self.pid)
            if kib:
                self.samples.append((time.monotonic(), kib))
            self._stop.wait(self.every_s)

    def __enter__(self) -> RssSampler:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self.thread.join(5)


def driver_command(module: str, spec: Mapping[str, Any], path: Path) -> list[str]:
    """The command line of a driver process, `python -m MODULE SPEC.json`, with `spec` written to `path`."""
    path.write_text(json.dumps(spec))
    return [sys.executable, "-m", module, str(path)]


def driver_spec(argv: Sequence[str]) -> dict[str, Any]:
    """In the driver process: the spec `driver_command` wrote."""
    if len(argv) != 2:
        raise SystemExit(f"usage: python -m {Path(argv[0]).stem} SPEC.json")
    spec: dict[str, Any] = json.loads(Path(argv[1]).read_text())
    return spec


# --------------------------------------------------------------------------- output


def report(
    measured: Mapping[str, Any], as_json: bool, title: str | None = None, lines: Iterable[str] | None = None
) -> None:
    """Print a measurement (a `to_dict()`) as one JSON object, or as `key value` lines (or as `lines`,
    a bench's own table of it) under `title`."""
    if as_json:
        print(json.dumps(measured, separators=(",", ":"), ensure_ascii=False))
        return
    if title:
        print(title)
    if lines is None:
        width = max(map(len, measured), default=0)
        lines = (f"{key:<{width}}  {_text(value)}" for key, value in measured.items())
    for line in lines:
        print(line)


def _text(value: Any) -> str:
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={v}" for k, v in value.items()) or "-"
    if isinstance(value, list | tuple):
        return "; ".join(str(v) for v in value) or "-"
    return str(value)
