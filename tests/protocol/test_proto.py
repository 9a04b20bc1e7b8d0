"""The .proto is the single source: the committed generated modules must match it."""

from __future__ import annotations

import subprocess
import sys

from support import ROOT


def test_generated_modules_are_up_to_date() -> None:
    done = subprocess.run(
        [sys.executable, str(ROOT / "proto" / "generate.py"), "--check"], capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
