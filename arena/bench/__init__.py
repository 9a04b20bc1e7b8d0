"""Every `arena bench ...` experiment: one module each, run by `arena.cli.bench`.

`engine`, `replay`, `server`, `ladder` and `arena` are the experiments; `common` holds what they
share (timed loops and windows, rates and ratios, process CPU and memory readers, percentiles,
driver processes started with a JSON spec, and `report`, which prints a measurement as `key value`
lines or one JSON object). The bots run in driver processes: `server_driver` and `quick_bot` for
`server` and `ladder`, `arena_driver` for `arena` (whose process handles are in `arena_processes`).

Benchmarks print numbers and compare as ratios within one run; they are never pass/fail tests.
"""
