"""A fixed amount of the referee's work, for an instruction counter:

    valgrind --tool=callgrind python -m benchmarks.serve_until K N

serves K matches to the quick bots of `python -m benchmarks server` (their driver runs in another process,
outside the counter) until the referee has made N decisions, prints how many it made, and exits.
Two runs with different N, their instructions subtracted and divided by the decisions between
them, give the server's instructions per decision, every thread included (RESULTS.md, "The
profile again, and this version's cuts"). A count does not change with the machine's load, as
times do.
"""

from __future__ import annotations

import logging
import sys
import tempfile
from pathlib import Path

import trio

from arena.engine import find_variant
from arena.logs import configure
from arena.server.app import serve

from .server import start_quick_matches


async def serve_until(matches: int, decisions: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        async with trio.open_nursery() as nursery:
            hub, port = await nursery.start(serve, "127.0.0.1", 0, Path(tmp))
            variant = find_variant("grosstarock")
            runners, driver = await start_quick_matches(hub, port, matches, variant, Path(tmp))
            while (made := sum(r.decisions for r in runners)) < decisions:
                await trio.sleep(0.2)  # rarely: a count of work, not of waiting
            driver.kill()
            await driver.wait()
            nursery.cancel_scope.cancel()
    return made


if __name__ == "__main__":
    configure(logging.WARNING)
    print(trio.run(serve_until, int(sys.argv[1]), int(sys.argv[2])))
