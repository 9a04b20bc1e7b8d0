"""Submitting a version, listing a bot's versions and disabling one: what the CLI calls.

The owner's calls are authenticated by the bot's token (the one `arena bots register` printed):
the token names the bot, so an owner sees and submits only its own bot's versions. Disabling is
the operator's (whoever can open the store).
"""

from __future__ import annotations

from pathlib import Path

from ..standing.store import BotRecord, Store, StoreError
from ..standing.versions import VersionRecord, Versions
from .archive import Submission, from_bytes, read_submission
from .manifest import ManifestError


class SubmitError(ValueError):
    """A submission refused before it was stored; the message says why."""


def owner(store: Store, token: str) -> BotRecord:
    """The bot whose token this is; SubmitError for an unknown or revoked token."""
    bot = store.bot_by_token(token) if token else None
    if bot is None:
        raise SubmitError("no bot registered in this arena has this token")
    if bot.revoked:
        raise SubmitError(f"the token of {bot.name} was revoked")
    return bot


def submit(store: Store, token: str, source: Path | bytes) -> tuple[VersionRecord, bool]:
    """Store the submission at `source` (a directory, an archive file, or archive bytes) as a new
    version of the token's bot, in state building; or the version that already has this code
    (False)."""
    bot = owner(store, token)
    submission: Submission = read_submission(source) if isinstance(source, Path) else from_bytes(source)
    wrong = [v for v in submission.manifest.variants if not bot.plays(v)]
    if wrong:
        raise ManifestError(
            f"{bot.name} is not registered for {wrong[0]!r} (it may play {', '.join(bot.variants)})"
        )
    try:
        return Versions(store).submit(
            bot.name, submission.digest, submission.manifest.to_dict(), submission.data
        )
    except StoreError as exc:
        raise SubmitError(str(exc)) from None


def versions(store: Store, token: str) -> tuple[str, list[VersionRecord]]:
    bot = owner(store, token)
    return bot.name, Versions(store).versions(bot.name)
