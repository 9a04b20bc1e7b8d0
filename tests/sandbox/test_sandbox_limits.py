"""The sandbox itself (arena.sandbox) with small shell commands: its verdicts, its CPU meter, that
stopping it leaves nothing behind, and builds (a writable output folder, a wall-clock limit)."""

from __future__ import annotations

import signal
import time
from pathlib import Path

import pytest
import trio
from support.sandbox import require_sandbox

from arena.sandbox import Limits, MiB, Mount, Reason, build, layout, start
from arena.server.sandboxed import SandboxedProcess


@pytest.fixture(autouse=True)
def _sandboxes() -> None:
    require_sandbox()


def sh(tmp_path: Path, script: str, **limits: float) -> tuple[Reason, str, str]:
    box = start(["/bin/sh", "-c", script], output=tmp_path / "out.log", limits=Limits(**limits))  # type: ignore[arg-type]
    verdict = box.wait(30)
    assert verdict is not None, "the sandbox did not end"
    return verdict.reason, verdict.describe(), (tmp_path / "out.log").read_text()


def test_verdicts_name_how_a_command_ended(tmp_path: Path) -> None:
    assert sh(tmp_path, "echo hello")[::2] == (Reason.EXITED, "hello\n")
    assert sh(tmp_path, "exit 3")[:2] == (Reason.FAILED, "failed: exit status 3")
    assert sh(tmp_path, "kill -SEGV $$")[:2] == (Reason.SIGNALLED, "signalled: killed by SIGSEGV")
    assert sh(tmp_path, "sleep 600", wall_s=0.5)[:2] == (
        Reason.WALL_TIME,
        "wall time: still running after 0.5 s of wall time",
    )
    reason, _, output = sh(tmp_path, "yes", output_bytes=4096)
    assert reason is Reason.OUTPUT and len(output) < 4096 + 100
    reason, detail, _ = sh(tmp_path, "f() { f | f & }; f; sleep 30", pids=16)
    assert (reason, detail) == (Reason.PIDS, "pids: over its limit of 16 processes")
    reason, detail, _ = sh(tmp_path, "x=a; while :; do x=$x$x; done", memory_bytes=32 * MiB)
    assert reason is Reason.MEMORY and detail.startswith("memory: over its memory limit of 32 MiB")


def alive(pid: int) -> bool:
    """Whether a process runs (a zombie, dead and waiting for whoever reaps it, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0] != "Z"
    except OSError:
        return False


def test_the_cpu_meter_counts_every_process_and_stopping_leaves_nothing(tmp_path: Path) -> None:
    box = start(
        ["/bin/sh", "-c", "(while :; do :; done) & (sleep 600) & wait"],
        output=tmp_path / "out.log",
        limits=Limits(cpus=0.5),
    )
    time.sleep(1.0)
    pids = box.pids()
    used = box.cpu_seconds()
    assert len(pids) >= 4  # bwrap, its init, the shell, the loop, sleep
    assert 0.05 < used < 0.8  # a quota of half a core, on a shared machine
    verdict = box.stop()
    assert verdict.reason is Reason.STOPPED and verdict.signal == signal.SIGKILL
    assert verdict.cpu_s >= used
    assert [pid for pid in pids if alive(pid)] == []
    assert not any((parent / box.name).exists() for parent in layout().parents.values())
    assert box.stop() == verdict  # stopping again keeps the verdict


def test_a_build_writes_only_its_output_folder_and_is_stopped_when_it_never_ends(tmp_path: Path) -> None:
    source, out = tmp_path / "src", tmp_path / "out"
    source.mkdir()
    out.mkdir()
    (source / "main.c").write_text("int main(void) { return 0; }\n")
    script = f"cc -o {out}/main main.c && touch main.o; echo touch=$?; {out}/main && echo ran"
    verdict = build(["/bin/sh", "-c", script], source=source, out=out, output=tmp_path / "build.log",
                    limits=Limits(wall_s=60, memory_bytes=256 * MiB))  # fmt: skip
    log = (tmp_path / "build.log").read_text()
    assert verdict.reason is Reason.EXITED, log
    assert "touch=1" in log and "Read-only file system" in log and "ran" in log
    assert (out / "main").is_file() and not (source / "main.o").exists()
    endless = build(["/bin/sh", "-c", "while :; do :; done"], source=source, out=out,
                    output=tmp_path / "endless.log", limits=Limits(wall_s=0.5))  # fmt: skip
    assert endless.reason is Reason.WALL_TIME
    with pytest.raises(ValueError, match="wall-clock limit"):
        build(["true"], source=source, out=out, output=tmp_path / "x.log", limits=Limits())
    assert Mount(source).args() == ["--ro-bind", str(source), str(source)]


def test_a_sandbox_as_a_bot_process_reads_its_input_and_reports_its_exit(tmp_path: Path) -> None:
    """`SandboxedProcess`: what code that runs bot processes (`local.BotProcess`) needs of one."""
    process = SandboxedProcess(
        start(["/bin/sh", "-c", "read code; exit $code"], output=tmp_path / "o.log", stdin=True)
    )
    assert process.returncode is None and process.pid > 0
    assert process.popen.stdin is not None
    process.popen.stdin.write(b"5\n")
    process.popen.stdin.flush()
    assert trio.run(process.wait) == 5 and process.returncode == 5
    trio.run(process.stop)  # ended already: nothing to do
    assert process.cpu_seconds() > 0  # kept when the sandbox is gone: a meter never goes back
