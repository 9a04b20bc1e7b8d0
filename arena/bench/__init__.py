"""Every `arena bench ...` experiment: one module each, run by `arena.cli.bench`.

Benchmarks print numbers and compare as ratios within one run; they are never pass/fail tests.
"""
