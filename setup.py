"""The build: the engine's hot modules compiled to C extensions with mypyc, or pure Python.

`pip install -e .` compiles the modules in COMPILED when mypyc and a C compiler are there. When
they are not, when the compile fails, or when ARENA_PURE_PYTHON=1 is set at install time, it
warns once and installs pure Python: the same sources, the same results, only slower.  At run
time ARENA_PURE_PYTHON=1 makes `arena` import the .py sources even when the compiled modules are
present (arena/__init__.py), and `arena.engine.BUILD` says which build is running.
"""

from __future__ import annotations

import os
import sys

from setuptools import setup
from setuptools.command.build_ext import build_ext

# The modules mypyc compiles, all into one shared library (arena/engine/_native__mypyc*.so) with a
# small extension per module.  Add a module with one line.  Left out: cards.py (Card subclasses
# int, which mypyc cannot compile as a native class), errors.py (plain exceptions), the package's
# __init__.py (it reports the build), explain.py (only runs for a rejected action) and match.py (once
# per deal; the tests replace its deck_for, which a compiled caller would not see).  Outside the
# engine: protocol.py, the referee's encoder of decision requests, which runs for every request a
# seat is sent.  Not the replay check (arena/replay): it compiles, but compiling gains it nothing,
# since its time is in str and json methods that are C already (docs/REPLAYS.md, "Speed").  The
# research extra's observation tensors (arena/research/tensors.py and the tables it reads) and the
# per-step methods of its PettingZoo environment (loop.py): they run at every step of the
# environment; plain Python without numpy or PettingZoo, which a build need not have
# (docs/RESEARCH.md).
COMPILED = [
    "arena/engine/actions.py",
    "arena/engine/combos.py",
    "arena/engine/deal.py",
    "arena/engine/phases.py",
    "arena/engine/play.py",
    "arena/engine/record.py",
    "arena/engine/result.py",
    "arena/engine/scoring.py",
    "arena/engine/state.py",
    "arena/engine/variants.py",
    "arena/engine/views.py",
    "arena/protocol.py",
    "arena/research/layout.py",
    "arena/research/loop.py",
    "arena/research/tensors.py",
]
GROUP = "arena.engine._native"

PURE_SWITCH = "ARENA_PURE_PYTHON"


def remove_compiled(keep: set[str]) -> None:
    """Remove compiled modules an earlier in-place (editable) build left in `arena`, but those in
    `keep` (module paths without .py): a module taken off the list, or a pure build, must not run
    old compiled code."""
    for folder, _, names in os.walk("arena"):
        for name in names:
            stem = os.path.join(folder, name.partition(".")[0])
            if name.endswith(".so") and stem not in keep:
                os.remove(os.path.join(folder, name))


def warn_pure(reason: str) -> None:
    """The one warning of a pure build."""
    remove_compiled(keep=set())
    print(
        f"WARNING: grosstarock-arena: installing the pure Python engine ({reason}); "
        "results are the same, the engine is slower",
        file=sys.stderr,
        flush=True,
    )


class BuildOrFallBack(build_ext):
    """build_ext that installs pure Python instead of failing when the C build fails."""

    def run(self) -> None:
        try:
            super().run()
        except (Exception, SystemExit) as exc:  # no compiler, no Python.h, a compiler error, ...
            for ext in self.extensions:  # no half-built set: a shim without its library cannot import
                path = self.get_ext_fullpath(ext.name)
                if os.path.exists(path):
                    os.remove(path)
            self.extensions = []
            warn_pure(f"the C build failed: {' '.join(str(exc).split())[:200]}")

    def get_outputs(self) -> list[str]:
        return super().get_outputs() if self.extensions else []


# The commands that build extensions; setup.py also runs for metadata only (egg_info, dist_info),
# where mypyc would type-check and generate C for nothing, and warn again.
BUILDING = {"build", "build_ext", "bdist_wheel", "editable_wheel", "develop", "install"}


def compiled_extensions() -> list[object]:
    """mypyc's extensions for COMPILED, or none (with the warning) for a pure build."""
    if not BUILDING & set(sys.argv[1:]):
        return []
    if os.environ.get(PURE_SWITCH) == "1":
        warn_pure(f"{PURE_SWITCH}=1")
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        warn_pure("mypyc is not installed")
        return []
    remove_compiled(
        keep={GROUP.replace(".", "/") + "__mypyc"} | {path.removesuffix(".py") for path in COMPILED}
    )
    try:
        return list(mypycify(COMPILED, opt_level="3", group_name=GROUP))
    except (Exception, SystemExit) as exc:  # mypyc type-checks first; an error there exits
        warn_pure(f"mypyc failed: {' '.join(str(exc).split())[:200]}")
        return []


setup(ext_modules=compiled_extensions(), cmdclass={"build_ext": BuildOrFallBack})
