"""Offline ladders: many matches between bot processes, duplicate seating, ratings, standings.

`config` reads the TOML ladder file, `schedule` lays out the duplicate matches, `store` keeps
results in SQLite (one transaction per finished match), `stats` turns them into ratings and
standings, `run` plays the matches through the referee server, `ab` compares two bots with a
sequential test, `report` writes the HTML report. See docs/LADDER.md.
"""
