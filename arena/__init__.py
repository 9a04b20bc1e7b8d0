"""Grosstarock Arena: a rules engine and referee for the Grosstarock family of tarot games."""

import os
import sys
from collections.abc import Sequence
from importlib.machinery import EXTENSION_SUFFIXES, SOURCE_SUFFIXES, FileFinder, ModuleSpec, SourceFileLoader
from types import ModuleType

__version__ = "0.1.0"

PURE_SWITCH = "ARENA_PURE_PYTHON"
"""Set to 1 to run the .py sources even where mypyc compiled them (setup.py), as a pure install does."""


class SourcesOnly:
    """Finds arena's modules among .py files only, so compiled extensions beside them stay unloaded."""

    @staticmethod
    def find_spec(
        name: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not name.startswith(f"{__name__}.") or path is None:
            return None
        for entry in path:
            spec = FileFinder(entry, (SourceFileLoader, SOURCE_SUFFIXES)).find_spec(name)
            if spec is not None:
                return spec
        return None


def stale_extensions(root: str) -> list[str]:
    """The compiled modules under `root` older than their .py source (edited since the last
    `pip install -e .`): running them would run old code."""
    stale = []
    for folder in [root, *(entry.path for entry in os.scandir(root) if entry.is_dir())]:
        names = set(os.listdir(folder))
        for name in sorted(names):
            stem, dot, ext = name.partition(".")
            if f"{dot}{ext}" not in EXTENSION_SUFFIXES or f"{stem}.py" not in names:
                continue
            source = os.path.join(folder, f"{stem}.py")
            if os.path.getmtime(source) > os.path.getmtime(os.path.join(folder, name)):
                stale.append(os.path.relpath(source, os.path.dirname(root)))
    return stale


def choose_sources() -> None:
    """Import the .py sources instead of the compiled engine when asked to, or when the compiled
    one is older than its sources (said once, on stderr: the results stay right, only slower)."""
    if os.environ.get(PURE_SWITCH) != "1":
        stale = stale_extensions(os.path.dirname(__file__))
        if not stale:
            return
        print(
            f"arena: compiled modules are older than {', '.join(stale)}: running the pure Python "
            f"sources; `pip install -e .` compiles them again",
            file=sys.stderr,
        )
    sys.meta_path.insert(0, SourcesOnly())


choose_sources()
