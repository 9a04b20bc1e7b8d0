"""Submitted bots: the code a bot's owner sends, built and tested in the sandbox, then run by the
standing arena's servers (docs/SUBMIT.md).

- `manifest`: ``arena-bot.toml``, what a submission says about itself;
- `archive`: a directory or an archive turned into one normalised tar and its digest;
- `build`: a version built per its language, in the sandbox;
- `accept`: the conformance kit against a built version, in the sandbox; the version is then
  active or rejected;
- `hosted`: the processes of active versions that the standing arena seats.

The versions and their states are kept by the standing arena's store (`arena.standing.versions`).
"""
