"""Reading a user's input file with one clear message per way it can fail."""

from __future__ import annotations

from pathlib import Path


class InputFileError(ValueError):
    """A file that cannot be read; the message names the path and the reason."""


def read_input(path: Path, what: str) -> bytes:
    """The bytes of `path`; `what` names the expected kind of file in the messages."""
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputFileError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputFileError(f"{path}: is a directory, not {what}") from None
    except OSError as exc:
        raise InputFileError(f"{path}: cannot read: {exc.strerror or exc}") from None


def read_input_text(path: Path, what: str) -> str:
    """The UTF-8 text of `path`."""
    try:
        return read_input(path, what).decode("utf-8")
    except UnicodeDecodeError:
        raise InputFileError(f"{path}: not a UTF-8 text file") from None
