"""Ladder files and the bots they name."""

from __future__ import annotations

from pathlib import Path

from support import BOTS

SCRIPTED = BOTS / "scripted_bot.py"


HEURISTIC = '[[bots]]\nname = "heuristic"\ncommand = "{python} -m arena_bot.heuristic_bot"\n'


RANDOM = '[[bots]]\nname = "random"\ncommand = "{python} -m arena_bot.random_bot"\n'


RANDOM_2 = '[[bots]]\nname = "random-2"\ncommand = "{python} -m arena_bot.random_bot"\n'


def crasher(request: int) -> str:
    """The scripted bot, exiting with status 3 at its `request`-th request of every match."""
    return (
        f'[[bots]]\nname = "crasher"\ncommand = "{{python}} {SCRIPTED}"\n'
        f'env = {{ BEHAVIOUR = "exit:{request}" }}\n'
    )


def ladder_file(directory: Path, head: str, *bots: str) -> Path:
    path = directory / "ladder.toml"
    clock = "[time_control]\nper_decision_ms = 10000\nbank_ms = 10000\n"  # roomy: the machine may be busy
    path.write_text(f'variant = "grosstarock"\n{head}\n{clock}\n' + "\n".join(bots))
    return path
