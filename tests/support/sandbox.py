"""The sandbox's tests: whether this host can run sandboxes, and bots copied to folders of their own."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from arena.sandbox import unavailable
from support import BOTS

SANDBOX_BOT = BOTS / "sandbox_bot.py"


def require_sandbox() -> None:
    """Skip where bubblewrap or usable cgroups are missing, saying why; under CI, fail instead."""
    why = unavailable()
    if why is None:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"CI cannot run sandboxes: {why} (.ci/apt-packages lists bubblewrap; CI runs as root)")
    pytest.skip(f"no sandboxes on this host: {why}")


def bot_copy(directory: Path, name: str) -> Path:
    """A copy of the sandbox test bot in a folder of its own (what the sandbox mounts of it)."""
    folder = directory / name
    folder.mkdir(parents=True)
    return Path(shutil.copy(SANDBOX_BOT, folder / "bot.py"))


def bot_command(path: Path, behaviour: str, **env: str) -> str:
    """The command of a sandbox test bot: this Python, with BEHAVIOUR and `env` set."""
    settings = " ".join(f"{key}={value}" for key, value in {"BEHAVIOUR": behaviour, **env}.items())
    return f"/usr/bin/env {settings} {sys.executable} {path}"
