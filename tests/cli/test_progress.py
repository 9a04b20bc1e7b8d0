"""The progress bar of the long jobs (arena.progress), through the real `arena` command: on
stderr only when stderr is a terminal, and never a byte more or less on stdout."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading

import pytest
from support import ROOT, arena

SAMPLES = sorted((ROOT / "replays" / "samples").glob("*.jsonl"))
SIMULATE = ("simulate", "--variant", "grosstarock", "--deals", "50", "--seed", "1")




def with_terminal_stderr(*args: str) -> tuple[int, str, str]:
    """Run `arena` with stdout a pipe and stderr a terminal (a pseudo-terminal 100 columns wide):
    the exit status, stdout, and what the terminal received."""
    pty = pytest.importorskip("pty")
    import fcntl
    import struct
    import termios

    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    env = {k: v for k, v in os.environ.items() if k not in ("TTY_COMPATIBLE", "FORCE_COLOR")}
    env["TERM"] = "xterm-256color"
    process = subprocess.Popen(
        [sys.executable, "-m", "arena", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=env,
    )
    os.close(slave)
    received = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: the process and its terminal are gone
                return
            if not chunk:
                return
            received.extend(chunk)

    reader = threading.Thread(target=drain)
    reader.start()
    try:
        stdout, _ = process.communicate(timeout=120)
    finally:
        reader.join(timeout=10)
        os.close(master)
    return process.returncode, stdout.decode(), received.decode(errors="replace")


def test_simulate_json_stdout_is_the_deals_only_and_stderr_is_empty_without_a_terminal() -> None:
    done = arena(*SIMULATE, "--json")
    assert done.returncode == 0 and done.stderr == ""
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["deal"] for line in lines] == list(range(50))
    assert "match_end" in lines[-1] and not any("match_end" in line for line in lines[:-1])


@pytest.mark.parametrize("json_flag", [("--json",), ()], ids=["json", "table"])
def test_simulate_on_a_terminal_draws_a_bar_on_stderr_and_stdout_is_byte_for_byte_the_same(
    json_flag: tuple[str, ...],
) -> None:
    plain = arena(*SIMULATE, *json_flag)
    status, stdout, terminal = with_terminal_stderr(*SIMULATE, *json_flag)
    assert status == 0 and plain.returncode == 0
    assert stdout == plain.stdout
    assert "50/50 deals" in terminal and "/s" in terminal and "elapsed" in terminal
    assert "variant" not in terminal and "deal dealer" not in terminal  # stdout stays on stdout


def test_verify_of_several_files_counts_them_on_a_terminal_and_prints_the_same_verdicts() -> None:
    files = [str(path) for path in SAMPLES]
    assert len(files) > 1
    plain = arena("replay", "verify", "--jobs", "2", *files)
    assert plain.returncode == 0 and plain.stderr == ""
    status, stdout, terminal = with_terminal_stderr("replay", "verify", "--jobs", "2", *files)
    assert status == 0 and stdout == plain.stdout
    assert f"{len(files)}/{len(files)} files" in terminal
