"""`arena bench web`, small: a real server and site, quick bots, real viewers over loopback.

Only behaviour is checked (every viewer got its position and then updates in every window,
the referee decided on both sides, the numbers are there), never timings: the machine may be
busy.
"""

from __future__ import annotations

import json

from arena.bench.web import bench_web


def test_bench_web_measures_both_sides_with_live_viewers() -> None:
    measured = bench_web(matches=2, viewers=6, seconds=1.5, rounds=1, frame_s=0.25)
    assert measured.windows == 4
    assert measured.decisions_per_s_0 > 0 and measured.decisions_per_s_n > 0
    assert measured.server_cpu_us_per_decision_0 > 0 and measured.server_cpu_us_per_decision_n > 0
    # Each viewer was kept up to date the whole window: an update every frame or so.
    assert measured.viewer_updates_min >= 3, measured.viewer_updates_min
    assert measured.viewer_bytes_per_s > 0 and measured.viewers_process_cpu_share >= 0
    json.dumps(measured.to_dict())
