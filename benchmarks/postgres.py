"""A throwaway PostgreSQL server from Debian's packages (`postgresql`), for the store's tests
(tests/postgres.py) and `python -m benchmarks arena --servers N`.

The server is a throwaway cluster: ``initdb`` into a temporary directory, trust
authentication for the user ``arena``, listening only on 127.0.0.1 on a free port with its
unix socket in that directory, fsync off. `PostgresServer.stop` stops it and removes its
directory.

The binaries are looked for on PATH and in /usr/lib/postgresql/*/bin, where Debian puts
them (not on PATH). PostgreSQL refuses to run as root: as root the server's files belong
to the ``postgres`` user, which Debian's package creates, and the server runs as that user.
A server that cannot start raises `PostgresUnavailable`, saying why.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import stat
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

USER = "arena"
BINARIES = ("initdb", "pg_ctl", "postgres")
START_TIMEOUT = 30  # seconds, for pg_ctl start -w
# Debian's binaries, newest major version first (they are not on PATH).
DEBIAN_GLOB = "/usr/lib/postgresql/*/bin"


class PostgresUnavailable(Exception):
    """The server cannot be started here; the message says why."""


def _version_key(directory: str) -> tuple[int, ...]:
    version = Path(directory).parent.name  # /usr/lib/postgresql/15/bin -> "15"
    return tuple(int(p) for p in version.split(".") if p.isdigit()) or (0,)


def candidate_dirs() -> list[Path]:
    """Directories that may hold initdb, pg_ctl and postgres: PATH's first, then Debian's."""
    dirs: list[Path] = []
    on_path = shutil.which("pg_ctl")
    if on_path:
        dirs.append(Path(on_path).resolve().parent)
    dirs.extend(Path(d) for d in sorted(glob.glob(DEBIAN_GLOB), key=_version_key, reverse=True))
    return list(dict.fromkeys(dirs))


def find_bindir() -> Path:
    """The first directory with all of initdb, pg_ctl and postgres, as executables."""
    dirs = candidate_dirs()
    for directory in dirs:
        if all(os.access(directory / name, os.X_OK) for name in BINARIES):
            return directory
    looked = ", ".join(str(d) for d in dirs) or f"nothing on PATH, nothing in {DEBIAN_GLOB}"
    raise PostgresUnavailable(
        f"no directory with all of {', '.join(BINARIES)} (looked at: {looked}); "
        "Debian: apt-get install postgresql"
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return "\n".join(text.strip().splitlines()[-lines:])


@dataclass
class PostgresServer:
    """A throwaway cluster in `root`; `start()` runs it, `stop()` stops it and removes `root`."""

    bindir: Path
    root: Path = field(init=False)
    port: int = field(init=False, default=0)
    running: bool = field(init=False, default=False)
    run_as: pwd.struct_passwd | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        if os.geteuid() == 0:
            # initdb and postgres refuse to run as root: the files and the server are the
            # postgres user's (Debian's package creates that user).
            try:
                self.run_as = pwd.getpwnam("postgres")
            except KeyError:
                raise PostgresUnavailable(
                    "running as root, and there is no 'postgres' user to run the server as "
                    "(Debian's postgresql package creates it)"
                ) from None
        parent = Path(tempfile.gettempdir())
        if self.run_as is not None and not self._traversable(parent):
            parent = Path("/tmp")
        self.root = Path(tempfile.mkdtemp(prefix="arena-pg-", dir=parent))
        if self.run_as is not None:
            self.root.chmod(0o755)
            os.chown(self.root, self.run_as.pw_uid, self.run_as.pw_gid)

    @property
    def data(self) -> Path:
        return self.root / "data"

    @property
    def log(self) -> Path:
        return self.root / "server.log"

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://{USER}@127.0.0.1:{self.port}/{database}"

    def _traversable(self, directory: Path) -> bool:
        """Whether the user the server runs as can reach `directory` (every parent searchable)."""
        assert self.run_as is not None
        for part in [directory, *directory.parents]:
            st = part.stat()
            if st.st_uid == self.run_as.pw_uid:
                bit = stat.S_IXUSR
            elif st.st_gid == self.run_as.pw_gid:
                bit = stat.S_IXGRP
            else:
                bit = stat.S_IXOTH
            if not st.st_mode & bit:
                return False
        return True

    def _run(self, *args: str | Path) -> subprocess.CompletedProcess[str]:
        options: dict[str, Any] = {}
        if self.run_as is not None:
            options = {"user": self.run_as.pw_uid, "group": self.run_as.pw_gid, "extra_groups": []}
        env = {**os.environ, "LC_ALL": "C", "LANG": "C"}
        if self.run_as is not None:
            env["HOME"] = str(self.root)
        return subprocess.run(
            [str(a) for a in args],
            cwd=self.root,  # readable by the server's user, unlike perhaps the caller's directory
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=START_TIMEOUT + 30,
            check=False,
            **options,
        )

    def _check(self, what: str, result: subprocess.CompletedProcess[str]) -> None:
        if result.returncode != 0:
            output = (result.stderr.strip() or result.stdout.strip()).splitlines()[-15:]
            detail = "\n".join(output)
            log = _tail(self.log)
            if log:
                detail += f"\nserver log:\n{log}"
            raise PostgresUnavailable(f"{what} exited with {result.returncode}: {detail}")

    def start(self) -> None:
        result = self._run(
            self.bindir / "initdb",
            "-A", "trust", "-U", USER, "-D", self.data,
            "--encoding", "UTF8", "--no-locale", "--no-sync",
        )  # fmt: skip
        self._check(f"{self.bindir / 'initdb'}", result)
        settings = [
            "listen_addresses = '127.0.0.1'",
            f"unix_socket_directories = '{self.root}'",
            "fsync = off",
            "synchronous_commit = off",
            "full_page_writes = off",
        ]
        with (self.data / "postgresql.conf").open("a") as conf:
            conf.write("\n# tests/postgres.py\n" + "".join(f"{line}\n" for line in settings))
        # A free port can be taken between finding it and binding it: try a few.
        for attempt in range(3):
            self.port = free_port()
            result = self._run(
                self.bindir / "pg_ctl", "start", "-w", "-t", str(START_TIMEOUT),
                "-D", self.data, "-l", self.log, "-o", f"-p {self.port}",
            )  # fmt: skip
            if result.returncode == 0:
                self.running = True
                return
            if attempt < 2 and "could not bind" in _tail(self.log, 50):
                continue
            self._check(f"{self.bindir / 'pg_ctl'} start", result)

    def stop(self) -> None:
        try:
            if self.running:
                self._run(self.bindir / "pg_ctl", "stop", "-w", "-m", "fast", "-D", self.data)
                self.running = False
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def create_database(server: PostgresServer, name: str) -> str:
    """A new, empty database on the server; its URL."""
    import psycopg

    with psycopg.connect(server.url("postgres"), autocommit=True, connect_timeout=10) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return server.url(name)
