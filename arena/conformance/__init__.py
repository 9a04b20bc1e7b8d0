"""The conformance kit: what a bot author runs before submitting a bot (`arena conformance`).

The kit asks a bot, over the real protocol (`arena.referee.position`), about scripted positions:
engine states reached by playing chosen decks (`cases.py`), one case per decision kind and per
edge case of each variant the engine knows, plus protocol probes (a broken stream, unknown
fields, a stray rejection, a request id above 2^63). `kit.py` judges each answer: legal, on
time, tagged with the request's id, no protocol fault.

    results = trio.run(lambda: run_cases("node my_bot.js", cases_for(["danish"]), log_dir=Path("logs")))
    print(table(results))

`ask.py` does the same for one recorded position of a replay (`arena replay ask`).

The package imports nothing by itself, so that `arena` commands other than `conformance` do
not load the server's modules: import from `.cases`, `.kit` and `.ask`.
"""

DEFAULT_PER_DECISION_MS = 5_000
"""A case's clock unless the command line says otherwise."""
