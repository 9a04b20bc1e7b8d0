"""The play of bots that fail their ultimos on purpose (tests/bots/ultimo_bot.py, and the referee's
in-memory bots of tests/referee/test_referee_int64.py): Danish pots double at each failed ultimo
(DK-END-3, AMB-07), so a match of them reaches numbers beyond 32 and 64 bits.

A seat keeps the pagat, if it holds it, to the last trick, where another seat's kept tarok beats
it; a seat without the pagat keeps its highest tarok for that trick. Other cards go lowest first,
so kings end up in the last trick too, and fail there as often. Every decision but a play takes
the first legal action.
"""

from __future__ import annotations


def choose_code(types: list[str], cards: list[str], hand: list[str]) -> int:
    """The index of the legal action to take: `types` and `cards` of the legal actions, the hand's
    card codes."""
    plays = [i for i, kind in enumerate(types) if kind == "play"]
    if not plays:
        return 0
    taroks = sorted(int(code[1:]) for code in hand if code.startswith("T"))
    keep = "T1" if "T1" in hand else (f"T{taroks[-1]}" if taroks else "")

    def cost(i: int) -> tuple[bool, int, str]:
        code = cards[i]
        return (code == keep, int(code[1:]) if code.startswith("T") else 0, code)

    return min(plays, key=cost)
