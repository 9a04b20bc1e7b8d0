"""A sandbox's control group: its limits (memory without swap, processes, CPU quota), the CPU it has
used, what stopped it (an OOM kill, the process limit reached) and killing every process in it.

Two layouts are supported (docs/SANDBOX.md):

- **cgroup v2**: one unified hierarchy; the parent cgroup (``ARENA_SANDBOX_CGROUP``, a path inside
  the cgroup2 mount, by default the server's own cgroup) must offer ``cpu``, ``memory`` and ``pids``
  to its children (``cgroup.subtree_control``), which a delegated cgroup (systemd's ``Delegate=yes``)
  does;
- **cgroup v1**: the ``cpu``, ``cpuacct``, ``memory`` and ``pids`` controllers each mounted on their
  own (or ``cpu,cpuacct`` together), writable; each sandbox gets a group in each of them, below the
  server's own group of that controller (so the server's own limits still bound its sandboxes).

v2 is preferred when it offers the three controllers; otherwise v1.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path

V1_CONTROLLERS = ("cpu", "cpuacct", "memory", "pids")
V2_CONTROLLERS = ("cpu", "memory", "pids")
CFS_PERIOD_US = 100_000
GROUP_DIR = "arena-sandbox"  # below the parent: where this server's sandboxes' groups live


class CgroupError(RuntimeError):
    """No usable cgroup layout, or a cgroup could not be made."""


def _mounts() -> tuple[dict[str, Path], Path | None]:
    """The v1 mount of each controller and the v2 mount, from /proc/self/mountinfo."""
    v1: dict[str, Path] = {}
    v2: Path | None = None
    with open("/proc/self/mountinfo", encoding="utf-8") as mountinfo:
        for line in mountinfo:
            left, _, right = line.partition(" - ")
            fields, extra = left.split(), right.split()
            if len(fields) < 5 or len(extra) < 3:
                continue
            point = Path(fields[4].replace("\\040", " "))
            if extra[0] == "cgroup2" and v2 is None:
                v2 = point
            elif extra[0] == "cgroup":
                for option in extra[2].split(","):
                    if option in V1_CONTROLLERS:
                        v1.setdefault(option, point)
    return v1, v2


def _own_groups() -> dict[str, str]:
    """This process's cgroup in each hierarchy (the v2 one under the key "")."""
    groups: dict[str, str] = {}
    with open("/proc/self/cgroup", encoding="utf-8") as lines:
        for line in lines:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            for controller in controllers.split(",") if controllers else [""]:
                groups[controller] = path
    return groups


@dataclass(frozen=True)
class Layout:
    """Where this host's sandbox cgroups are made: v2 (one parent) or v1 (a parent per controller)."""

    version: int
    parents: dict[str, Path]  # controller → parent directory; v2: the key "" only

    def describe(self) -> str:
        where = ", ".join(f"{k or 'unified'}: {v}" for k, v in sorted(self.parents.items()))
        return f"cgroup v{self.version} ({where})"


def _writable_dir(path: Path) -> bool:
    return path.is_dir() and os.access(path, os.W_OK)


def _v2_layout(mount: Path, why: list[str]) -> Layout | None:
    configured = os.environ.get("ARENA_SANDBOX_CGROUP", "")
    base = mount / (configured or _own_groups().get("", "/")).lstrip("/")
    offered = set((base / "cgroup.controllers").read_text().split()) if base.is_dir() else set()
    missing = [c for c in V2_CONTROLLERS if c not in offered]
    if missing:
        why.append(f"cgroup v2 at {base} does not offer {', '.join(missing)}")
        return None
    parent = base / GROUP_DIR
    try:
        (base / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in V2_CONTROLLERS))
        parent.mkdir(exist_ok=True)
        (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in V2_CONTROLLERS))
    except OSError as error:
        why.append(f"cgroup v2 at {base}: cannot delegate {', '.join(V2_CONTROLLERS)} ({error.strerror})")
        return None
    return Layout(2, {"": parent})


def _v1_layout(mounts: dict[str, Path], why: list[str]) -> Layout | None:
    own = _own_groups()
    parents: dict[str, Path] = {}
    for controller in V1_CONTROLLERS:
        mount = mounts.get(controller)
        if mount is None:
            why.append(f"cgroup v1: no {controller} controller mounted")
            return None
        base = mount / own.get(controller, "/").lstrip("/")
        if not _writable_dir(base):
            why.append(f"cgroup v1: {base} is not writable")
            return None
        parents[controller] = base / GROUP_DIR
    for parent in set(parents.values()):
        try:
            parent.mkdir(exist_ok=True)
        except OSError as error:
            why.append(f"cgroup v1: cannot make {parent} ({error.strerror})")
            return None
    return Layout(1, parents)


_layout: Layout | None = None
_layout_problem = ""


def layout() -> Layout:
    """This host's layout (found once); `CgroupError` saying what is missing when there is none."""
    global _layout, _layout_problem
    if _layout is None and not _layout_problem:
        why: list[str] = []
        try:
            v1, v2 = _mounts()
            found = _v2_layout(v2, why) if v2 is not None else None
            _layout = found or _v1_layout(v1, why)
        except OSError as error:
            why.append(str(error))
        _layout_problem = "; ".join(why) if _layout is None else ""
    if _layout is None:
        raise CgroupError(f"no usable cgroups for sandboxes: {_layout_problem}")
    return _layout


def _read_int(path: Path, default: int = 0) -> int:
    try:
        return int(path.read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return default


def _read_keyed(path: Path) -> dict[str, int]:
    values: dict[str, int] = {}
    try:
        for line in path.read_text().splitlines():
            key, _, value = line.partition(" ")
            with contextlib.suppress(ValueError):
                values[key] = int(value)
    except OSError:
        pass
    return values


class Cgroup:
    """One sandbox's group (a directory per v1 controller, or one v2 directory)."""

    def __init__(self, name: str, memory_bytes: int, pids: int, cpus: float | None) -> None:
        """`cpus` None: no CPU quota. On cgroup v1 with cpu and cpuacct mounted apart, the group then
        stays out of the cpu controller: a group of its own there is a scheduling entity of its own,
        which on a busy machine waits for its turn after every wake-up (docs/SANDBOX.md)."""
        self.layout = layout()
        self.name = name
        self.dirs = {controller: parent / name for controller, parent in self.layout.parents.items()}
        v1 = self.layout.parents
        if cpus is None and self.layout.version == 1 and v1["cpu"] != v1["cpuacct"]:
            del self.dirs["cpu"]
        self._usage_fd = -1
        self._final = 0.0  # the CPU used, kept when the group is removed: a meter never goes back
        for path in set(self.dirs.values()):
            path.mkdir()
        quota = -1 if cpus is None else max(1000, int(cpus * CFS_PERIOD_US))
        try:
            if self.layout.version == 2:
                d = self.dirs[""]
                (d / "memory.max").write_text(str(memory_bytes))
                (d / "memory.swap.max").write_text("0")
                (d / "pids.max").write_text(str(pids))
                (d / "cpu.max").write_text(f"{quota if quota > 0 else 'max'} {CFS_PERIOD_US}")
                self._usage = d / "cpu.stat"
            else:
                memory = self.dirs["memory"]
                (memory / "memory.limit_in_bytes").write_text(str(memory_bytes))
                # memory+swap: the same limit means no swap at all (absent without swap accounting)
                with contextlib.suppress(OSError):
                    (memory / "memory.memsw.limit_in_bytes").write_text(str(memory_bytes))
                (self.dirs["pids"] / "pids.max").write_text(str(pids))
                cpu = self.dirs.get("cpu")
                if cpu is not None:
                    (cpu / "cpu.cfs_period_us").write_text(str(CFS_PERIOD_US))
                    (cpu / "cpu.cfs_quota_us").write_text(str(quota))
                self._usage = self.dirs["cpuacct"] / "cpuacct.usage"
        except OSError:
            self.remove()
            raise
        self._usage_fd = os.open(self._usage, os.O_RDONLY)

    def procs_files(self) -> list[Path]:
        """The files a process writes its pid to, to join this group."""
        return [path / "cgroup.procs" for path in sorted(set(self.dirs.values()))]

    def cpu_seconds(self) -> float:
        """CPU time (user and system, every process and thread) used in this group so far."""
        if self._usage_fd < 0:
            return self._final
        try:
            data = os.pread(self._usage_fd, 4096, 0)
        except OSError:
            return self._final
        if self.layout.version == 1:
            return int(data) / 1e9
        for line in data.split(b"\n"):
            if line.startswith(b"usage_usec "):
                return int(line[11:]) / 1e6
        return 0.0

    def pids(self) -> list[int]:
        """The processes in the group (in any of its v1 directories)."""
        found: set[int] = set()
        for path in self.procs_files():
            with contextlib.suppress(OSError):
                found.update(int(p) for p in path.read_text().split())
        return sorted(found)

    def oom_kills(self) -> int:
        """How many processes the kernel killed for the memory limit."""
        if self.layout.version == 2:
            return _read_keyed(self.dirs[""] / "memory.events").get("oom_kill", 0)
        return _read_keyed(self.dirs["memory"] / "memory.oom_control").get("oom_kill", 0)

    def pids_refused(self) -> int:
        """How many forks the process limit refused."""
        d = self.dirs[""] if self.layout.version == 2 else self.dirs["pids"]
        return _read_keyed(d / "pids.events").get("max", 0)

    def memory_peak(self) -> int:
        if self.layout.version == 2:
            return _read_int(self.dirs[""] / "memory.peak")
        return _read_int(self.dirs["memory"] / "memory.max_usage_in_bytes")

    def kill(self, timeout: float = 5.0) -> bool:
        """SIGKILL every process in the group until none is left; True when it is empty.

        v2 has ``cgroup.kill``; v1 kills the listed processes over and over (a fork bomb's
        children are bounded by the process limit, and each round kills all it can see)."""
        deadline = time.monotonic() + timeout
        if self.layout.version == 2:
            with contextlib.suppress(OSError):
                (self.dirs[""] / "cgroup.kill").write_text("1")
        while True:
            pids = self.pids()
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            if time.monotonic() > deadline:
                return False
            time.sleep(0.002)

    def remove(self) -> None:
        """Kill what is left and remove the group's directories."""
        self.kill()
        if self._usage_fd >= 0:
            self._final = self.cpu_seconds()
            os.close(self._usage_fd)
            self._usage_fd = -1
        for path in set(self.dirs.values()):
            for _ in range(100):  # rmdir fails with EBUSY until the last zombie is reaped
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as error:
                    if error.errno != errno.EBUSY:
                        raise
                    time.sleep(0.01)
