"""The conformance kit run against a bot command."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from arena.conformance.cases import build_cases
from arena.engine import VARIANT_NAMES

CASES = {name: build_cases(name) for name in VARIANT_NAMES}


def conformance(bot_command: str, *args: str) -> tuple[int, dict[str, Any]]:
    """`arena conformance --json` in its own process: the exit status and the report."""
    done = subprocess.run(
        [sys.executable, "-m", "arena", "conformance", "--bot", bot_command, "--json", *args],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.stdout, done.stderr
    return done.returncode, json.loads(done.stdout)


def failed(report: dict[str, Any]) -> dict[tuple[str, str], str]:
    return {(c["variant"], c["case"]): c["detail"] for c in report["cases"] if not c["passed"]}
