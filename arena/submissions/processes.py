"""A version's process in the sandbox: its built tree on this host, its command, its limits."""

from __future__ import annotations

import itertools
import os
import shutil
import tempfile
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..sandbox import Limits, MiB, Sandbox, start
from ..standing.versions import VersionRecord, Versions
from .archive import unpack
from .build import Toolchain, default_cpp_sdk, run_command
from .manifest import Manifest

BOT_LIMITS = Limits(memory_bytes=512 * MiB, pids=64, cpus=1.0, scratch_bytes=64 * MiB, output_bytes=1 * MiB)


@dataclass
class RuntimeConfig:
    work_dir: Path  # built trees, logs, the C++ protocol library
    toolchain: Toolchain = field(default_factory=Toolchain)
    limits: Limits = BOT_LIMITS
    per_match_wall_s: float = 3600.0  # a process of one match: the backstop
    build_poll_s: float = 1.0  # how often the store is asked for versions to build (0: never)

    def __post_init__(self) -> None:
        if self.toolchain.cpp_sdk == Path():  # built once per protocol, under the work directory
            prebuilt = os.environ.get("ARENA_CPP_SDK")  # or one built already (docs/SUBMIT.md)
            sdk = (
                Path(prebuilt)
                if prebuilt
                else default_cpp_sdk(self.work_dir / "sdk", self.toolchain.proto_root)
            )
            self.toolchain = replace(self.toolchain, cpp_sdk=sdk)


class Trees:
    """Built trees of versions on this host, unpacked from the store once each."""

    def __init__(self, versions: Versions, root: Path) -> None:
        self.versions = versions
        self.root = root

    def tree(self, version: VersionRecord) -> Path:
        if not version.build_digest:
            raise ValueError(f"{version.bot} version {version.version} is not built")
        path = self.root / version.build_digest[:24]
        if not path.is_dir():
            self.root.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(dir=self.root, prefix=".unpack-"))
            unpack(self.versions.archive(version.build_digest), staging)
            staging.chmod(0o755)
            try:
                staging.rename(path)
            except OSError:  # another thread unpacked it first
                shutil.rmtree(staging, ignore_errors=True)
        return path


_names = itertools.count(1)


def next_name() -> int:
    """A number for this process's next sandbox or log, unique within the process."""
    return next(_names)


def sandbox_env(manifest: Manifest, version: VersionRecord, toolchain: Toolchain) -> dict[str, str]:
    return {
        **toolchain.env(manifest.language),
        "ARENA_BOT_NAME": version.bot,
        "ARENA_HOSTED_VERSION": str(version.version),
    }


def start_version(
    version: VersionRecord,
    tree: Path,
    config: RuntimeConfig,
    socket: Path,
    env: dict[str, str] | None,
    output: Path,
    wall_s: float | None,
) -> Sandbox:
    """A process of `version` in a new sandbox: with `env`, for one match; None: a persistent
    process reading its matches from its input."""
    manifest = Manifest.from_dict(version.manifest)
    toolchain = config.toolchain
    environment = sandbox_env(manifest, version, toolchain)
    if env is None:
        environment["ARENA_MATCHES"] = "stdin"
    else:
        environment.update(env)
    limits = Limits(
        memory_bytes=config.limits.memory_bytes,
        pids=config.limits.pids,
        cpus=config.limits.cpus,
        scratch_bytes=config.limits.scratch_bytes,
        output_bytes=config.limits.output_bytes,
        wall_s=wall_s,
    )
    return start(
        run_command(manifest, tree, toolchain),
        output=output,
        limits=limits,
        code=tree,
        mounts=toolchain.mounts(manifest.language),
        socket=socket,
        env=environment,
        stdin=env is None,
        name=f"bot-{version.bot}-{version.version}-{os.getpid()}-{next(_names)}",
    )
