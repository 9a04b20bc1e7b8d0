"""Sandboxes for bots the arena runs itself (submitted code) and for their builds (docs/SANDBOX.md).

A sandbox is a command in bubblewrap (`bwrap`) with a read-only system, the bot's code read-only, a
private scratch of capped size, no network at all (the referee only through one Unix socket bound
in), a cleared environment, and a cgroup of its own that limits its memory (no swap), its number of
processes and its CPU (a quota), and measures the CPU it uses. A wall-clock backstop ends one that
outlives its purpose, its output goes to a file up to a cap, and stopping it kills every process
it started. It ends with a `Verdict` whose `Reason` names why.

    from arena.sandbox import Limits, Mount, start, python_mounts
    with start(["/venv/bin/python", "bot.py"], code=bot_dir, socket=referee_socket,
               mounts=python_mounts(), env={"ARENA_TOKEN": token}, output=log_path,
               limits=Limits(memory_bytes=256 * MiB, wall_s=600)) as box:
        meter = box.cpu_seconds  # the CPU clock of the bot's seat (arena.referee)
        ...
    verdict = box.stop()  # already stopped by the with block; the verdict is kept

`build` runs a build in the same kind of sandbox and waits for it. `unavailable()` says why
sandboxes cannot run on this host (None when they can).

This package knows nothing of gRPC, the referee or the store: it sits at the base of the layers,
beside `arena.files`.
"""

from .cgroups import CgroupError, Layout, layout
from .run import (
    BUILD_LIMITS,
    SCRATCH,
    SOCKET_PATH,
    Limits,
    MiB,
    Mount,
    Reason,
    Sandbox,
    Verdict,
    build,
    python_mounts,
    start,
    unavailable,
)

__all__ = [
    "BUILD_LIMITS",
    "SCRATCH",
    "SOCKET_PATH",
    "CgroupError",
    "Layout",
    "Limits",
    "MiB",
    "Mount",
    "Reason",
    "Sandbox",
    "Verdict",
    "build",
    "layout",
    "python_mounts",
    "start",
    "unavailable",
]
