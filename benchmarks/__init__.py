"""Every `python -m benchmarks TARGET` experiment: one module each, run by `benchmarks.__main__`.

Not part of the product: nothing under `arena/` imports this package, and it is not installed. It
drives the product through its public modules, from the repository's root (driver processes are
started as `python -m benchmarks.…` and find the package there). Results: RESULTS.md.

`engine`, `replay`, `server`, `ladder` and `arena` are the experiments; `common` holds what they
share (timed loops and windows, rates and ratios, process CPU and memory readers, percentiles,
driver processes started with a JSON spec, and `report`, which prints a measurement as `key value`
lines or one JSON object). The bots run in driver processes: `server_driver` and `quick_bot` for
`server` and `ladder`, `arena_driver` for `arena` (whose process handles are in `arena_processes`).

Benchmarks print numbers and compare as ratios within one run; they are never pass/fail tests.
"""
