"""A bot of the Python SDK for the sandbox's tests (tests/sandbox): it plays random legal actions, and
at its first decision does what BEHAVIOUR says (one word, with an argument after ':'):

  play              nothing more
  probe             try the ways out of the sandbox and print what happened, one line each:
                    TCP to 127.0.0.1:$PROBE_PORT, reading each of $PROBE_READ (':'-separated
                    paths), the environment of every process it sees, writing beside its code and
                    in /, and writing past the scratch's cap
  fork              a fork bomb
  memory            allocate far beyond any memory limit
  print             print without end
  sleep:S           sleep S seconds (by default an hour)
  linger            leave a process behind (a double fork into a session of its own: `sleep
                    $LINGER_SECONDS`) and play on
  spin:N            at every decision, N rounds of hashing 1 MiB (fixed work); spin:N:T on T threads
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import random
import socket
import sys
import threading
import time

from arena_bot.match import run_bot

BEHAVIOUR, _, ARGUMENT = os.environ.get("BEHAVIOUR", "play").partition(":")
rng = random.Random(7)
BUFFER = os.urandom(1 << 20)
first = True


def say(text: str) -> None:
    print(text, flush=True)


def probe() -> None:
    port = int(os.environ.get("PROBE_PORT", "0"))
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2):
            say(f"TCP connected to 127.0.0.1:{port}")
    except OSError as error:
        say(f"TCP refused: {error}")
    for path in filter(None, os.environ.get("PROBE_READ", "").split(":")):
        try:
            with open(path, "rb") as handle:
                say(f"READ {path}: {handle.read(64)!r}")
        except OSError as error:
            say(f"NOREAD {path}: {error.strerror}")
    for pid in sorted(p for p in os.listdir("/proc") if p.isdigit()):
        try:
            with open(f"/proc/{pid}/environ", "rb") as handle:
                say(f"ENV {pid}: {handle.read()!r}")
        except OSError as error:
            say(f"NOENV {pid}: {error.strerror}")
    say(f"MYENV {dict(os.environ)!r}")
    for path in (os.path.join(os.path.dirname(os.path.abspath(__file__)), "written"), "/written"):
        try:
            with open(path, "w") as handle:
                handle.write("x")
            say(f"WROTE {path}")
        except OSError as error:
            say(f"NOWRITE {path}: {error.strerror}")
    written = 0
    try:
        with open("/tmp/fill", "wb") as handle:
            for _ in range(1024):  # up to 1 GiB, far past the scratch's cap
                handle.write(BUFFER)
                handle.flush()
                written += len(BUFFER)
    except OSError as error:
        say(f"FULL after {written} bytes: {error.strerror}")
    else:
        say(f"FILLED {written} bytes")
    os.remove("/tmp/fill")


def linger() -> None:
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv("/bin/sleep", ["sleep", os.environ.get("LINGER_SECONDS", "3600")])
        os._exit(0)
    say(f"LINGER started from {os.getpid()}")


def misbehave() -> None:
    if BEHAVIOUR == "probe":
        probe()
    elif BEHAVIOUR == "fork":
        while True:
            with contextlib.suppress(OSError):
                os.fork()
    elif BEHAVIOUR == "memory":
        hoard = []
        while True:
            hoard.append(bytearray(16 << 20))
    elif BEHAVIOUR == "print":
        while True:
            sys.stdout.write("all work and no play makes a dull bot\n" * 100)
    elif BEHAVIOUR == "sleep":
        time.sleep(float(ARGUMENT or 3600))
    elif BEHAVIOUR == "linger":
        linger()


def spin(rounds: int) -> None:
    for _ in range(rounds):
        hashlib.sha256(BUFFER).digest()  # releases the GIL: threads run in parallel


def decide(request):  # type: ignore[no-untyped-def]
    global first
    if first:
        first = False
        misbehave()
    if BEHAVIOUR == "spin":
        rounds, _, threads = ARGUMENT.partition(":")
        count = int(threads or 1)
        workers = [threading.Thread(target=spin, args=(int(rounds) // count,)) for _ in range(count)]
        for worker in workers:
            worker.start()
        for worker in workers:
            worker.join()
    return rng.choice(list(request.legal_actions))


if __name__ == "__main__":
    run_bot(decide, name=f"sandbox-{BEHAVIOUR}")
