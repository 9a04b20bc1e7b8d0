"""Starting a command in a sandbox, watching it, and the verdict when it ends.

The command runs in bubblewrap (`bwrap`) inside a cgroup of its own (arena/sandbox/cgroups.py). A
small shell joins the cgroup and then becomes bwrap, so bwrap and everything it starts are counted
and limited from the first instruction, and killing the cgroup leaves nothing behind. One thread
per sandbox copies its output to a file (up to the cap) and one watches it (the wall-clock
backstop, an OOM kill, the process limit).
"""

from __future__ import annotations

import contextlib
import enum
import os
import shlex
import shutil
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from .cgroups import Cgroup, CgroupError, layout

MiB = 1024 * 1024
SOCKET_PATH = "/run/arena/referee.sock"
"""Where the referee's Unix socket appears inside a sandbox (``ARENA_ADDRESS=unix:`` it)."""
SCRATCH = "/tmp"
"""The sandbox's private writable scratch (a tmpfs of `Limits.scratch_bytes`; also ``HOME``)."""
WATCH_INTERVAL_S = 0.05
SHM_BYTES = 4 * MiB  # /dev/shm, beside the scratch
# What of /etc a program needs to start: the dynamic linker's cache, the alternatives' links
# (/usr/bin/c++ and friends), the time zone, user names. Never the whole of /etc.
ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "localtime", "passwd", "group",
    "nsswitch.conf",
)  # fmt: skip
SANDBOX_UID = 65534  # nobody, inside the sandbox's user namespace


class Reason(enum.StrEnum):
    """Why a sandboxed process ended: the verdict's name."""

    EXITED = "exited"  # exit status 0
    FAILED = "failed"  # another exit status
    SIGNALLED = "signalled"  # killed by a signal it did not get from the sandbox
    MEMORY = "memory"  # the memory limit: the kernel killed one of its processes
    PIDS = "pids"  # the process limit refused a fork
    WALL_TIME = "wall time"  # the wall-clock backstop
    OUTPUT = "output"  # stdout and stderr past their cap
    STOPPED = "stopped"  # stopped by its owner (`Sandbox.stop`): its purpose is over


@dataclass(frozen=True)
class Limits:
    """What one sandbox may use. `wall_s` None: no backstop (a persistent bot, stopped by its owner)."""

    memory_bytes: int = 512 * MiB
    pids: int = 64
    cpus: float | None = 1.0  # the CPU quota, in cores; None: none (the CPU is still measured)
    scratch_bytes: int = 64 * MiB
    output_bytes: int = 1 * MiB
    wall_s: float | None = None

    def __post_init__(self) -> None:
        if (
            self.memory_bytes < 4 * MiB
            or self.pids < 1
            or (self.cpus is not None and self.cpus <= 0)
            or self.scratch_bytes < 0
        ):
            raise ValueError(f"impossible sandbox limits: {self}")
        if self.wall_s is not None and self.wall_s <= 0:
            raise ValueError("wall_s is positive or None")


@dataclass(frozen=True)
class Mount:
    """A host path seen in the sandbox at `target` (by default the same path), read-only unless
    `writable`."""

    source: Path
    target: str = ""
    writable: bool = False

    def args(self) -> list[str]:
        return ["--bind" if self.writable else "--ro-bind", str(self.source), self.target or str(self.source)]


@dataclass(frozen=True)
class Verdict:
    """How a sandbox ended: the named `reason`, the exit status or signal, the CPU and wall time."""

    reason: Reason
    exit_status: int | None = None
    signal: int | None = None
    cpu_s: float = 0.0
    wall_s: float = 0.0
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.reason is Reason.EXITED

    def describe(self) -> str:
        return f"{self.reason}: {self.detail}" if self.detail else str(self.reason)


def unavailable() -> str | None:
    """Why sandboxes cannot run on this host (no bwrap, no usable cgroups), or None."""
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        layout()
    except CgroupError as error:
        return str(error)
    return None


def python_mounts() -> list[Mount]:
    """What a Python bot of this installation reads: the interpreter's prefix and the environment's
    (a venv), read-only. The SDK, when installed in the venv in development mode, needs its own
    source directory too (a `Mount` of it)."""
    import sys

    paths = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    return [Mount(path) for path in sorted(paths)]


def _bwrap_args(
    code: Path | None, mounts: Sequence[Mount], socket: Path | None, scratch_bytes: int,
    env: Mapping[str, str], cwd: str,
) -> list[str]:  # fmt: skip
    args = ["bwrap", "--unshare-all", "--die-with-parent", "--new-session", "--unshare-user"]
    args += ["--uid", str(SANDBOX_UID), "--gid", str(SANDBOX_UID), "--disable-userns", "--cap-drop", "ALL"]
    args += ["--hostname", "sandbox", "--ro-bind", "/usr", "/usr"]
    for link in ("bin", "lib", "lib32", "lib64", "sbin"):
        target = Path("/") / link
        if target.is_symlink():
            args += ["--symlink", os.readlink(target), str(target)]
        elif target.is_dir():
            args += ["--ro-bind", str(target), str(target)]
    for name in ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    args += ["--proc", "/proc", "--dev", "/dev", "--size", str(SHM_BYTES), "--tmpfs", "/dev/shm"]
    args += ["--size", str(scratch_bytes), "--tmpfs", SCRATCH]
    if code is not None:
        args += ["--ro-bind", str(code), str(code)]
    for mount in mounts:
        args += mount.args()
    if socket is not None:
        args += ["--bind", str(socket), SOCKET_PATH]
    # bwrap's root and /dev are tmpfs of its own, writable unless made read-only: only the scratch
    # and /dev/shm (POSIX semaphores, shared memory) are, each with a size.
    args += ["--remount-ro", "/dev", "--remount-ro", "/", "--clearenv", "--chdir", cwd]
    for key, value in env.items():
        args += ["--setenv", key, value]
    return args


class Sandbox:
    """One running sandboxed command. Start it with `start`; `cpu_seconds` is its CPU meter (the
    CPU every process and thread of it used so far); `stop` (or leaving the `with` block) kills
    whatever is left of it and returns the `Verdict`; `wait` waits for it to end by itself.
    `stdin` is a pipe to the command when `start` was asked for one."""

    def __init__(self, command: Sequence[str], *, limits: Limits, output: Path, bwrap: list[str],
                 stdin: bool, name: str) -> None:  # fmt: skip
        self.name = name
        self.limits = limits
        self.output = output
        self._out = open(output, "wb")  # noqa: SIM115 (the output thread closes it): fails here, not later
        try:
            self.cgroup = Cgroup(name, limits.memory_bytes, limits.pids, limits.cpus)
        except BaseException:
            self._out.close()
            raise
        self._killed: Reason | None = None
        self._verdict: Verdict | None = None
        self._lock = threading.Lock()
        self._ended = threading.Event()
        join = " && ".join(f"echo $$ > {shlex.quote(str(p))}" for p in self.cgroup.procs_files())
        launcher = ["/bin/sh", "-c", f'{join} && exec "$@"', "sandbox", *bwrap, "--", *command]
        self.started = time.monotonic()
        try:
            self.process = subprocess.Popen(
                launcher,
                stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env={"PATH": "/usr/bin:/bin"},
                close_fds=True,
            )
        except OSError:
            self._out.close()
            self.cgroup.remove()
            raise
        self.stdin: IO[bytes] | None = self.process.stdin
        self._output_done = threading.Event()
        threading.Thread(target=self._copy_output, name=f"sandbox-out-{name}", daemon=True).start()
        threading.Thread(target=self._watch, name=f"sandbox-watch-{name}", daemon=True).start()

    # The CPU meter: a callable that the referee's CPU clocks read (arena/referee, docs/SANDBOX.md).
    def cpu_seconds(self) -> float:
        """The CPU time, in seconds, that this sandbox's processes have used so far."""
        return self.cgroup.cpu_seconds()

    @property
    def running(self) -> bool:
        return not self._ended.is_set()

    def pids(self) -> list[int]:
        """The host's ids of the processes still in the sandbox's cgroup."""
        return self.cgroup.pids()

    def _copy_output(self) -> None:
        assert self.process.stdout is not None
        fd = self.process.stdout.fileno()
        written = 0
        with self._out as out:
            while True:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                room = self.limits.output_bytes - written
                out.write(chunk[: max(room, 0)])
                out.flush()
                written += len(chunk)
                if written > self.limits.output_bytes:
                    out.write(
                        f"\n[sandbox: output past {self.limits.output_bytes} bytes, stopped]\n".encode()
                    )
                    self._kill(Reason.OUTPUT)
                    break
        self.process.stdout.close()
        self._output_done.set()

    def _watch(self) -> None:
        wall = self.limits.wall_s
        while True:
            try:
                self.process.wait(WATCH_INTERVAL_S)
                break
            except subprocess.TimeoutExpired:
                pass
            if self.cgroup.oom_kills():
                self._kill(Reason.MEMORY)
            elif self.cgroup.pids_refused():
                self._kill(Reason.PIDS)
            elif wall is not None and time.monotonic() - self.started > wall:
                self._kill(Reason.WALL_TIME)
        self._finish()

    def _kill(self, reason: Reason) -> None:
        with self._lock:
            if self._killed is None:
                self._killed = reason
        self.cgroup.kill()

    def _finish(self) -> None:
        # The main process is gone; what it left behind goes with the cgroup.
        self.cgroup.kill()
        self._output_done.wait(5.0)
        wall_s = time.monotonic() - self.started
        cpu_s = self.cgroup.cpu_seconds()
        oom = self.cgroup.oom_kills()
        refused = self.cgroup.pids_refused()
        peak = self.cgroup.memory_peak()
        self.cgroup.remove()
        code = self.process.returncode
        assert code is not None
        status: int | None = code if code >= 0 else None
        sig: int | None = -code if code < 0 else None
        if code > 128 and self._killed is None:
            status, sig = None, code - 128  # bwrap passes on a signal's death as 128 + signal
        reason = self._killed
        if reason is None:
            reason = Reason.MEMORY if oom else Reason.PIDS if refused and status else None
        if reason is None:
            reason = (
                Reason.EXITED if status == 0 else Reason.FAILED if status is not None else Reason.SIGNALLED
            )
        detail = _detail(reason, self.limits, status, sig, peak)
        self._verdict = Verdict(reason, status, sig, cpu_s, wall_s, detail)
        self._ended.set()

    def wait(self, timeout: float | None = None) -> Verdict | None:
        """The verdict once the sandbox has ended by itself (or been killed), or None at `timeout`."""
        if not self._ended.wait(timeout):
            return None
        assert self._verdict is not None
        return self._verdict

    def stop(self, reason: Reason = Reason.STOPPED) -> Verdict:
        """Kill every process of the sandbox (if any is left) and return its verdict. A sandbox that
        had ended already keeps the verdict it had."""
        if self.stdin is not None:
            with contextlib.suppress(OSError):
                self.stdin.close()
        if not self._ended.is_set():
            self._kill(reason)
        self._ended.wait()
        assert self._verdict is not None
        return self._verdict

    def __enter__(self) -> Sandbox:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def _detail(reason: Reason, limits: Limits, status: int | None, sig: int | None, peak: int) -> str:
    if reason is Reason.MEMORY:
        return f"over its memory limit of {limits.memory_bytes // MiB} MiB (peak {peak // MiB} MiB)"
    if reason is Reason.PIDS:
        return f"over its limit of {limits.pids} processes"
    if reason is Reason.WALL_TIME:
        return f"still running after {limits.wall_s:g} s of wall time"
    if reason is Reason.OUTPUT:
        return f"more than {limits.output_bytes} bytes of output"
    if reason is Reason.FAILED:
        return f"exit status {status}"
    if reason is Reason.SIGNALLED and sig is not None:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(sig).name}"
        return f"killed by signal {sig}"
    return ""


def start(
    command: Sequence[str],
    *,
    output: Path,
    limits: Limits = Limits(),
    code: Path | None = None,
    mounts: Sequence[Mount] = (),
    socket: Path | None = None,
    env: Mapping[str, str] | None = None,
    cwd: str | None = None,
    stdin: bool = False,
    name: str | None = None,
) -> Sandbox:
    """Start `command` (its path as seen inside) in a new sandbox and return it, running.

    - `code`: the bot's directory, read-only at the same path; the working directory unless `cwd`.
    - `mounts`: more host paths (read-only unless `Mount.writable`), e.g. `python_mounts()`.
    - `socket`: the referee's Unix socket, the only way out: it appears at `SOCKET_PATH`, and
      ``ARENA_ADDRESS`` is ``unix:`` that path unless `env` says otherwise.
    - `env`: the whole environment besides ``PATH``, ``HOME`` (the scratch) and ``LANG``; nothing of
      the server's own environment passes.
    - `output`: a host file that gets stdout and stderr together, up to `Limits.output_bytes`.
    - `stdin`: a pipe to the command (`Sandbox.stdin`) instead of /dev/null.

    Raises `CgroupError` where cgroups cannot be made and `OSError` when bwrap cannot start; a
    command that bwrap cannot run fails inside (a verdict `failed`, bwrap's message in `output`).
    """
    environment = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": SCRATCH, "LANG": "C.UTF-8"}
    if socket is not None:
        environment["ARENA_ADDRESS"] = f"unix:{SOCKET_PATH}"
    environment.update(env or {})
    workdir = cwd or (str(code) if code is not None else SCRATCH)
    args = _bwrap_args(code, mounts, socket, limits.scratch_bytes, environment, workdir)
    name = name or f"sb-{uuid.uuid4().hex[:12]}"
    return Sandbox(command, limits=limits, output=output, bwrap=args, stdin=stdin, name=name)


BUILD_LIMITS = Limits(memory_bytes=1024 * MiB, pids=64, cpus=1.0, scratch_bytes=256 * MiB, wall_s=300.0)


def build(
    command: Sequence[str],
    *,
    source: Path,
    out: Path,
    output: Path,
    limits: Limits = BUILD_LIMITS,
    mounts: Sequence[Mount] = (),
    env: Mapping[str, str] | None = None,
) -> Verdict:
    """Run a build `command` in a sandbox and wait for its verdict: `source` read-only (the working
    directory), `out` writable (the only place whose files outlive the build), no network, the
    build's own limits (`limits.wall_s` is required: a build that never ends is stopped).
    `output` gets the build's log."""
    if limits.wall_s is None:
        raise ValueError("a build needs a wall-clock limit (Limits.wall_s)")
    sandbox = start(
        command, output=output, limits=limits, code=source,
        mounts=[*mounts, Mount(out, writable=True)], env=env,
    )  # fmt: skip
    verdict = sandbox.wait()
    assert verdict is not None
    return verdict
