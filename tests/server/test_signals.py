"""How `arena` ends, through real processes: a taken port, Ctrl-C and SIGTERM of `arena serve`
and `arena play` (bot processes stopped, the replay left as .jsonl.part), interrupts in
general (exit 130/143 without a traceback)."""

from __future__ import annotations

import json
import os
import queue
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from support import free_port

from arena.v1 import arena_pb2 as pb
from arena.v1 import arena_pb2_grpc as pb_grpc

ARENA = [sys.executable, "-m", "arena"]

# Every seat connects and then never answers, so the match is still running when the signal
# comes. The bot writes its PID (and the PIDs of what it started) to DIR/seat<N>, and touches
# DIR/deciding when it gets a request. Seat 1 ignores SIGTERM (it must be killed); seat 2
# starts a child of its own (it must end too).
HANGING_BOT = textwrap.dedent(
    """
    import os, signal, subprocess, sys, time
    from pathlib import Path
    from arena_bot.match import run_bot

    seat = os.environ["ARENA_SEAT"]
    pids = [os.getpid()]
    if seat == "1":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    if seat == "2":
        pids.append(subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)"]).pid)
    Path(sys.argv[1], "seat" + seat).write_text(" ".join(map(str, pids)))

    def decide(request):
        Path(sys.argv[1], "deciding").touch()
        time.sleep(600)

    run_bot(decide)
    """
)


class Lines:
    """The lines a process writes to stderr, read on a thread (a readline with a deadline)."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._thread = threading.Thread(target=self._read, args=(process.stderr,), daemon=True)
        self._thread.start()

    def _read(self, stream: Any) -> None:
        for line in stream:
            self._queue.put(line)
        self._queue.put(None)

    def wait_for(self, event: str, timeout: float = 15) -> dict[str, Any]:
        """The first JSON log line with this event; fails on EOF or after `timeout`."""
        deadline = time.monotonic() + timeout
        while True:
            line = self._queue.get(timeout=max(0.01, deadline - time.monotonic()))
            assert line is not None, f"stderr ended before {event!r}: {''.join(self.seen)}"
            self.seen.append(line)
            with_event = _json(line)
            if with_event is not None and with_event.get("event") == event:
                return with_event

    def rest(self) -> str:
        """Everything written to stderr, once the process has exited."""
        self._thread.join(10)
        while not self._queue.empty():
            line = self._queue.get()
            if line is not None:
                self.seen.append(line)
        return "".join(self.seen)


def _json(line: str) -> dict[str, Any] | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@contextmanager
def running(args: list[str], cwd: Path, **kwargs: Any) -> Iterator[subprocess.Popen[str]]:
    process = subprocess.Popen(
        args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=cwd,
        **kwargs,
    )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()




def serve_args(tmp_path: Path, name: str, port: int) -> list[str]:
    return [
        *ARENA, "serve", "--port", str(port), "--replay-dir", str(tmp_path / f"replays-{name}"),
        "--store", str(tmp_path / f"{name}.db"), "--operator-token-file", str(tmp_path / f"{name}.tok"),
    ]  # fmt: skip


def health(port: int) -> int:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        answer = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
    return int(answer.status)


def alive(pid: int) -> bool:
    """Running (a zombie that only waits to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def only_log_lines(stderr: str) -> None:
    assert "Traceback" not in stderr and "ExceptionGroup" not in stderr, stderr
    assert all(_json(line) is not None for line in stderr.splitlines()), stderr


def test_a_second_server_on_a_taken_port_exits_with_one_line(tmp_path: Path) -> None:
    port = free_port()
    with running(serve_args(tmp_path, "a", port), tmp_path) as first:
        first_lines = Lines(first)
        first_lines.wait_for("server listening")
        second = subprocess.run(
            serve_args(tmp_path, "b", port), cwd=tmp_path, capture_output=True, text=True, timeout=20
        )
        assert second.returncode == 1
        assert second.stderr == (
            f"arena serve: cannot listen on 127.0.0.1:{port}: the port is in use by another process\n"
        )
        assert first.poll() is None
        for _ in range(5):  # every connection lands on the first server
            assert health(port) == health_pb2.HealthCheckResponse.SERVING
        first.send_signal(signal.SIGINT)
        assert first.wait(timeout=10) == 0
        only_log_lines(first_lines.rest())


@pytest.mark.parametrize("number", [signal.SIGINT, signal.SIGTERM])
def test_arena_serve_stops_cleanly_on_a_signal(tmp_path: Path, number: signal.Signals) -> None:
    with running([*serve_args(tmp_path, "a", 0)], tmp_path) as server:
        lines = Lines(server)
        port = lines.wait_for("server listening")["port"]
        token = (tmp_path / "a.tok").read_text().strip()
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:  # a match no bot ever joins
            created = pb_grpc.AdminServiceStub(channel).CreateMatch(
                pb.CreateMatchRequest(variant="grosstarock", deals=3),
                metadata=[("authorization", f"Bearer {token}")],
                timeout=5,
            )
        partial = tmp_path / "replays-a" / f"{created.match_id}.jsonl.part"
        deadline = time.monotonic() + 5
        while not partial.exists():
            assert time.monotonic() < deadline, "the match never opened its replay log"
            time.sleep(0.02)
        started = time.monotonic()
        server.send_signal(number)
        assert server.wait(timeout=10) == 0
        assert time.monotonic() - started < 8
        stderr = lines.rest()
    only_log_lines(stderr)
    assert json.loads(stderr.splitlines()[-1]) | {"timestamp": ""} == {
        "signal": number.name, "event": "server stopped", "level": "info", "timestamp": "",
    }  # fmt: skip
    assert partial.is_file() and not partial.with_suffix("").exists()  # cut off, recorded as such
    assert json.loads(partial.read_text().splitlines()[0])["type"] == "header"


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--arena-config", "nil.toml", "arena serve: --arena-config nil.toml: no such file or directory"),
        ("--operator-token-file", ".", "arena serve: --operator-token-file .: is a directory"),
        ("--store", "no/such/dir/a.db", "arena serve: no/such/dir/a.db: cannot open the arena store"),
    ],
)
def test_arena_serve_refuses_an_unusable_file_in_one_line(
    tmp_path: Path, option: str, value: str, message: str
) -> None:
    args = [*ARENA, "serve", "--port", "0", "--store", "a.db", "--operator-token-file", "a.tok"]
    args += [option, value]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=20)
    assert done.returncode == 1
    assert done.stderr.startswith(message) and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize(("number", "status"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_arena_play_stopped_by_a_signal_leaves_no_bot_and_a_part_log(
    tmp_path: Path, number: signal.Signals, status: int
) -> None:
    script, pids, replays = tmp_path / "hanging_bot.py", tmp_path / "pids", tmp_path / "replays"
    script.write_text(HANGING_BOT)
    pids.mkdir()
    bot = shlex.join([sys.executable, str(script), str(pids)])
    args = [
        *ARENA, "play", "--variant", "grosstarock", "--deals", "30", "--per-decision-ms", "60000",
        "--replay-dir", str(replays), "--bot", bot, "--bot", bot, "--bot", bot,
    ]  # fmt: skip
    def bot_pids() -> list[int]:
        return [int(pid) for seat in sorted(pids.glob("seat*")) for pid in seat.read_text().split()]

    try:
        with running(args, tmp_path) as play:
            lines = Lines(play)
            deadline = time.monotonic() + 10
            while len(list(pids.glob("seat*"))) < 3 or not (pids / "deciding").exists():
                assert play.poll() is None, lines.rest()
                assert time.monotonic() < deadline, "the match never asked a bot for a decision"
                time.sleep(0.02)
            assert len(bot_pids()) == 4 and all(alive(pid) for pid in bot_pids())
            started = time.monotonic()
            play.send_signal(number)
            assert play.wait(timeout=10) == status
            stderr = lines.rest()
            stopped_in = time.monotonic() - started
        assert "Traceback" not in stderr and "ExceptionGroup" not in stderr, stderr
        assert stopped_in < 8
        deadline = time.monotonic() + 3
        while left := [pid for pid in bot_pids() if alive(pid)]:  # gone already; the kernel may lag
            assert time.monotonic() < deadline, f"bot processes left: {left}"
            time.sleep(0.05)
    finally:  # a failed test leaves nothing running either
        for pid in bot_pids():
            if alive(pid):
                os.kill(pid, signal.SIGKILL)
    [partial] = replays.glob("*.jsonl.part")
    assert not list(replays.glob("*.jsonl"))
    kinds = [json.loads(line)["type"] for line in partial.read_text().splitlines()]
    assert kinds[0] == "header" and "match_end" not in kinds


IN_USE = "the port is in use by another process"

# `main` itself, with a command that stands for any trio command not using run_until_signalled.
MAIN_WITH = textwrap.dedent(
    """
    import argparse, sys, trio
    import arena.cli as cli
    from arena.server.app import ListenError

    async def child_fails(error):
        raise error

    async def command(kind):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(trio.sleep_forever)
            if kind == "interrupt":
                raise KeyboardInterrupt
            if kind == "listen":
                error = ListenError("127.0.0.1", 1, "the port is in use by another process")
                nursery.start_soon(child_fails, error)
            if kind == "wait":
                print("waiting", flush=True)

    class Parser:
        def parse_known_args(self, argv):
            return argparse.Namespace(command="test", run=lambda args: trio.run(command, sys.argv[1])), []

    cli.build_parser = Parser
    sys.exit(cli.main([]))
    """
)


@pytest.mark.parametrize(
    ("kind", "number", "status", "stderr"),
    [
        ("interrupt", None, 130, ""),
        ("listen", None, 1, f"arena test: cannot listen on 127.0.0.1:1: {IN_USE}\n"),
        ("wait", signal.SIGINT, 130, ""),
        ("wait", signal.SIGTERM, 143, ""),
    ],
)
def test_main_ends_interrupts_and_bind_errors_without_a_traceback(
    tmp_path: Path, kind: str, number: signal.Signals | None, status: int, stderr: str
) -> None:
    with running([sys.executable, "-c", MAIN_WITH, kind], tmp_path) as process:
        assert process.stdout is not None and process.stderr is not None
        if number is not None:
            assert process.stdout.readline() == "waiting\n"
            process.send_signal(number)
        assert process.wait(timeout=10) == status
        assert process.stderr.read() == stderr


def test_bot_processes_run_in_a_process_group_of_their_own(tmp_path: Path) -> None:
    """A Ctrl-C at the terminal goes to the command alone; it then stops the bots itself."""
    assert os.name == "posix"
    code = "import os; print(os.getpgid(0) == os.getpid())"
    probe = textwrap.dedent(
        f"""
        import trio
        from pathlib import Path
        from arena.server.local import launch_bot

        class Owner:
            match_id = "0" * 16
            done = trio.Event()
            def mark_crashed(self, seat, detail):
                pass

        async def main():
            out = Path("out.log")
            await launch_bot(Owner(), 0, "token", {shlex.join([sys.executable, "-c", code])!r}, "x:1", out)
            print(out.read_text().strip())

        trio.run(main)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=20, cwd=tmp_path
    )
    assert done.stdout.split()[-1] == "True", done.stderr
