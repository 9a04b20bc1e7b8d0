"""A submission as one normalised archive, and its digest.

A directory, a tar (plain, .gz, .bz2, .xz) or a zip becomes one uncompressed tar whose bytes
depend only on the files' paths, contents and whether they are executable: entries sorted by
path, owner 0, time 0, mode 0755 or 0644, no symbolic links, devices or paths outside the root;
``__pycache__``, ``.git`` and ``node_modules`` left out (the arena provides the SDKs). The
version's digest is the SHA-256 of those bytes, so the same code submitted twice (from a
directory or an archive of it) is one version.
"""

from __future__ import annotations

import hashlib
import io
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from .manifest import MANIFEST, Manifest, ManifestError, parse

MAX_BYTES = 16 * 1024 * 1024
MAX_FILES = 2000
SKIPPED = {"__pycache__", ".git", "node_modules"}


class ArchiveError(ValueError):
    """The submission cannot be read or is not allowed; the message says why."""


@dataclass(frozen=True)
class Submission:
    data: bytes  # the normalised tar
    digest: str
    manifest: Manifest


def _clean(name: str) -> str | None:
    """The entry's path inside the submission; None for one left out."""
    path = PurePosixPath(name)
    if path.is_absolute() or ".." in path.parts:
        raise ArchiveError(f"{name!r} points outside the submission")
    if any(part in SKIPPED for part in path.parts) or str(path) in ("", "."):
        return None
    return str(path)


def _read_dir(root: Path) -> dict[str, tuple[bytes, bool]]:
    files: dict[str, tuple[bytes, bool]] = {}
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if any(part in SKIPPED for part in PurePosixPath(rel).parts):
            continue
        if path.is_symlink():
            raise ArchiveError(f"{rel}: symbolic links are not allowed")
        if path.is_file():
            files[rel] = (path.read_bytes(), bool(path.stat().st_mode & 0o111))
            _check(files)
        elif not path.is_dir():
            raise ArchiveError(f"{rel}: only files and directories are allowed")
    return files


def _read_tar(data: bytes) -> dict[str, tuple[bytes, bool]]:
    files: dict[str, tuple[bytes, bool]] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            for member in tar:
                name = _clean(member.name)
                if name is None or member.isdir():
                    continue
                if not member.isfile():
                    raise ArchiveError(f"{member.name}: only files and directories are allowed")
                handle = tar.extractfile(member)
                assert handle is not None
                files[name] = (handle.read(), bool(member.mode & 0o111))
                _check(files)
    except tarfile.TarError as exc:
        raise ArchiveError(f"not a readable tar archive: {exc}") from None
    return files


def _read_zip(data: bytes) -> dict[str, tuple[bytes, bool]]:
    files: dict[str, tuple[bytes, bool]] = {}
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            for info in archive.infolist():
                name = _clean(info.filename)
                if name is None or info.is_dir():
                    continue
                mode = info.external_attr >> 16
                if mode and (mode & 0o170000) not in (0, 0o100000):
                    raise ArchiveError(f"{info.filename}: only files and directories are allowed")
                files[name] = (archive.read(info), bool(mode & 0o111))
                _check(files)
    except zipfile.BadZipFile as exc:
        raise ArchiveError(f"not a readable zip archive: {exc}") from None
    return files


def _check(files: dict[str, tuple[bytes, bool]]) -> None:
    if len(files) > MAX_FILES:
        raise ArchiveError(f"more than {MAX_FILES} files")
    if sum(len(data) for data, _ in files.values()) > MAX_BYTES:
        raise ArchiveError(f"more than {MAX_BYTES} bytes of files")


def normalise(files: dict[str, tuple[bytes, bool]]) -> bytes:
    """The one tar of these files (path -> (contents, executable))."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name in sorted(files):
            data, executable = files[name]
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mode = 0o755 if executable else 0o644
            info.mtime = 0
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            tar.addfile(info, io.BytesIO(data))
    return out.getvalue()


def read_submission(source: Path) -> Submission:
    """The submission at `source` (a directory or an archive file), normalised, with its manifest."""
    if source.is_dir():
        files = _read_dir(source)
    elif source.is_file():
        raw = source.read_bytes()
        files = _read_zip(raw) if zipfile.is_zipfile(io.BytesIO(raw)) else _read_tar(raw)
    else:
        raise ArchiveError(f"{source}: no such directory or archive")
    return submission_of(files)


def submission_of(files: dict[str, tuple[bytes, bool]]) -> Submission:
    if MANIFEST not in files:
        raise ManifestError(f"no {MANIFEST} at the root of the submission")
    try:
        text = files[MANIFEST][0].decode()
    except UnicodeDecodeError:
        raise ManifestError(f"{MANIFEST} is not UTF-8") from None
    manifest = parse(text, set(files))
    data = normalise(files)
    return Submission(data, hashlib.sha256(data).hexdigest(), manifest)


def from_bytes(data: bytes) -> Submission:
    """A submission sent as archive bytes (the API): normalised again, so its digest is the arena's."""
    files = _read_zip(data) if zipfile.is_zipfile(io.BytesIO(data)) else _read_tar(data)
    return submission_of(files)


def unpack(data: bytes, into: Path) -> None:
    """A normalised tar (from the store) into the directory `into`."""
    into.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        tar.extractall(into, filter="data")


def pack(root: Path) -> tuple[bytes, str]:
    """A built tree as a normalised tar and its digest (kept in the store for every server)."""
    files: dict[str, tuple[bytes, bool]] = {}
    for path in sorted(root.rglob("*")):
        if path.is_file() and not path.is_symlink():
            files[path.relative_to(root).as_posix()] = (path.read_bytes(), bool(path.stat().st_mode & 0o111))
    data = normalise(files)
    return data, hashlib.sha256(data).hexdigest()
