"""JSON log lines stay whole when several processes share one stderr, as a ladder's referee
processes share the ladder's."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter

LINES = 3000
WRITER = """
import sys
import structlog
from arena.logs import configure
configure()
log = structlog.get_logger(component="ladder")
for number in range({lines}):
    log.info("match recorded", writer=int(sys.argv[1]), number=number, padding="x" * 200)
"""


def test_lines_of_processes_sharing_stderr_never_run_together() -> None:
    read_end, write_end = os.pipe()
    code = WRITER.format(lines=LINES)
    writers = [
        subprocess.Popen([sys.executable, "-c", code, str(who)], stdout=subprocess.DEVNULL, stderr=write_end)
        for who in (0, 1)
    ]
    os.close(write_end)
    with os.fdopen(read_end, "rb") as pipe:
        text = pipe.read().decode()
    assert [w.wait(timeout=60) for w in writers] == [0, 0]
    records = [json.loads(line) for line in text.splitlines()]  # each line one whole object
    assert Counter(r["writer"] for r in records) == {0: LINES, 1: LINES}
