"""``arena-bot.toml``: the manifest at the root of a submission.

language = "python"          # python | node | cpp | exe
entry = "bot.py"             # python: a script; node: a .js file; exe: the executable;
                             # cpp: the program's name (its sources are `sources`)
variants = ["grosstarock"]   # the variants it plays (default: every variant of the arena)
persistent = true            # it plays match after match, one per line of its standard input
                             # (the SDKs' ARENA_MATCHES=stdin); false: a process per match
sources = ["bot.cpp"]        # cpp only: the files compiled (default every *.cpp at the root)
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from ..engine import VARIANT_NAMES

MANIFEST = "arena-bot.toml"
LANGUAGES = ("python", "node", "cpp", "exe")


class ManifestError(ValueError):
    """The manifest is missing or says something the arena cannot run; the message says what."""


@dataclass(frozen=True)
class Manifest:
    language: str
    entry: str
    variants: tuple[str, ...] = ()
    persistent: bool = False
    sources: tuple[str, ...] = field(default_factory=tuple)

    def to_dict(self) -> dict[str, Any]:
        return {
            "language": self.language,
            "entry": self.entry,
            "variants": list(self.variants),
            "persistent": self.persistent,
            "sources": list(self.sources),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Manifest:
        return cls(
            str(data["language"]),
            str(data["entry"]),
            tuple(data.get("variants", ())),
            bool(data.get("persistent", False)),
            tuple(data.get("sources", ())),
        )


def _relative(value: object, what: str) -> str:
    if not isinstance(value, str) or not value:
        raise ManifestError(f"{MANIFEST}: {what} must be a non-empty string")
    path = PurePosixPath(value)
    if path.is_absolute() or ".." in path.parts:
        raise ManifestError(f"{MANIFEST}: {what} {value!r} must be a path inside the submission")
    return str(path)


def parse(text: str, files: set[str]) -> Manifest:
    """The manifest `text`, checked against the submission's `files` (relative POSIX paths)."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ManifestError(f"{MANIFEST}: {exc}") from None
    unknown = sorted(set(data) - {"language", "entry", "variants", "persistent", "sources"})
    if unknown:
        raise ManifestError(f"{MANIFEST}: unknown key {unknown[0]!r}")
    language = data.get("language")
    if language not in LANGUAGES:
        raise ManifestError(f"{MANIFEST}: language must be one of {', '.join(LANGUAGES)}, not {language!r}")
    entry = _relative(data.get("entry"), "entry")
    variants = data.get("variants", [])
    if not isinstance(variants, list) or not all(isinstance(v, str) for v in variants):
        raise ManifestError(f"{MANIFEST}: variants must be a list of names")
    wrong = [v for v in variants if v not in VARIANT_NAMES]
    if wrong:
        raise ManifestError(f"{MANIFEST}: unknown variant {wrong[0]!r} (known: {', '.join(VARIANT_NAMES)})")
    persistent = data.get("persistent", False)
    if not isinstance(persistent, bool):
        raise ManifestError(f"{MANIFEST}: persistent must be true or false")
    sources: tuple[str, ...] = ()
    if language == "cpp":
        raw = data.get("sources") or sorted(f for f in files if "/" not in f and f.endswith(".cpp"))
        if not isinstance(raw, list) or not raw:
            raise ManifestError(f"{MANIFEST}: a cpp bot needs sources (no *.cpp file at the root)")
        sources = tuple(_relative(s, "a source") for s in raw)
        missing = [s for s in sources if s not in files]
        if missing:
            raise ManifestError(f"{MANIFEST}: source {missing[0]!r} is not in the submission")
        if "/" in entry:
            raise ManifestError(f"{MANIFEST}: a cpp bot's entry is the program's name, not a path")
    elif "sources" in data:
        raise ManifestError(f"{MANIFEST}: sources is for cpp bots only")
    elif entry not in files:
        raise ManifestError(f"{MANIFEST}: entry {entry!r} is not in the submission")
    return Manifest(language, entry, tuple(variants), persistent, sources)
