"""Building a version, and the command that runs it, per language, in the sandbox (`arena.sandbox`).

Every build runs in a sandbox with the build's limits (time, memory, processes; no network): the
submission read-only, an output directory writable, and the SDK of its language read-only at a
fixed place (`SDK_ROOT`). What the build leaves in the output directory is the version's tree:
kept in the store, and what every server runs.

- python: the tree is the submission, its files compiled once to prove they parse; it runs with
  the arena's interpreter and the Python SDK (``import arena_bot``) on its path.
- node: the submission, ``node --check`` on its entry; it runs with the Node SDK as
  ``require('arena-bot')`` (``NODE_PATH``) and the protocol file (``ARENA_PROTO``).
- cpp: its sources compiled with Debian's g++ against Debian's gRPC and protobuf and the arena's
  protocol library (the generated code of proto/arena/v1/arena.proto, compiled once per host in
  the sandbox too, `ensure_cpp_sdk`); the program is `entry`.
- exe: a prebuilt Linux executable, `entry`, run as it is.
"""

from __future__ import annotations

import hashlib
import sys
from dataclasses import dataclass
from pathlib import Path

from ..sandbox import BUILD_LIMITS, Limits, MiB, Mount, Verdict, python_mounts
from ..sandbox import build as sandbox_build
from .manifest import Manifest

SDK_ROOT = "/opt/arena"
REPO = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Toolchain:
    """Where this host keeps what bots are built and run with."""

    python: Path = Path(sys.executable)
    python_sdk: Path = REPO / "clients" / "python"
    node_sdk: Path = REPO / "clients" / "node"
    proto_root: Path = REPO / "proto"
    cpp_sdk: Path = Path()  # generated/ and libarena_protocol.a; default: `default_cpp_sdk`
    limits: Limits = BUILD_LIMITS

    def mounts(self, language: str) -> list[Mount]:
        proto = Mount(self.proto_root, f"{SDK_ROOT}/proto")
        if language == "python":
            return [*python_mounts(), Mount(self.python_sdk, f"{SDK_ROOT}/python")]
        if language == "node":
            return [Mount(self.node_sdk, f"{SDK_ROOT}/node_modules/arena-bot"), proto]
        if language == "cpp":
            return [Mount(self.cpp_sdk, f"{SDK_ROOT}/cpp")]
        return []

    def env(self, language: str) -> dict[str, str]:
        if language == "python":
            return {"PYTHONPATH": f"{SDK_ROOT}/python", "PYTHONDONTWRITEBYTECODE": "1"}
        if language == "node":
            return {
                "NODE_PATH": f"{SDK_ROOT}/node_modules",
                "ARENA_PROTO": f"{SDK_ROOT}/proto/arena/v1/arena.proto",
            }
        return {}


CPP_SDK_LIMITS = Limits(memory_bytes=2048 * MiB, pids=64, scratch_bytes=512 * MiB, wall_s=900.0)


def default_cpp_sdk(cache: Path, proto_root: Path = REPO / "proto") -> Path:
    """Where the C++ protocol library of this protocol is built, under the worker's `cache`."""
    digest = hashlib.sha256((proto_root / "arena" / "v1" / "arena.proto").read_bytes()).hexdigest()
    return cache / f"cpp-sdk-{digest[:16]}"


def python_in_sandbox(toolchain: Toolchain) -> str:
    """The interpreter's path as the sandbox sees it (its prefixes are mounted where they are)."""
    return str(toolchain.python)


def build_command(manifest: Manifest, source: Path, out: Path, toolchain: Toolchain) -> list[str]:
    """The build's command line, run in the sandbox with `source` as its working directory."""
    copy = f"cp -R {source}/. {out}/"
    if manifest.language == "python":
        check = f"PYTHONPYCACHEPREFIX=/tmp {python_in_sandbox(toolchain)} -m compileall -q {out}"
        return ["/bin/sh", "-c", f"{copy} && {check}"]
    if manifest.language == "node":
        return ["/bin/sh", "-c", f"{copy} && node --check {out}/{manifest.entry}"]
    if manifest.language == "exe":
        return [
            "/bin/sh",
            "-c",
            f"{copy} && test -x {out}/{manifest.entry} || {{ echo 'entry is not executable'; exit 1; }}",
        ]
    sdk = f"{SDK_ROOT}/cpp"
    sources = " ".join(f"{source}/{s}" for s in manifest.sources)
    flags = "$(pkg-config --cflags --libs grpc++ protobuf)"
    compile_ = (
        f"g++ -O2 -std=c++17 -I{sdk}/generated {sources} {sdk}/libarena_protocol.a {flags} "
        f"-o {out}/{manifest.entry}"
    )
    return ["/bin/sh", "-c", f"cd /tmp && {compile_}"]


def build(manifest: Manifest, source: Path, out: Path, log: Path, toolchain: Toolchain) -> Verdict:
    """Build the submission at `source` into `out` in the sandbox; `log` gets the build's output."""
    if manifest.language == "cpp":
        missing = ensure_cpp_sdk(toolchain, log)
        if missing is not None:
            return missing
    out.mkdir(parents=True, exist_ok=True)
    return sandbox_build(
        build_command(manifest, source, out, toolchain),
        source=source,
        out=out,
        output=log,
        limits=toolchain.limits,
        mounts=toolchain.mounts(manifest.language),
        env=toolchain.env(manifest.language),
    )


def ensure_cpp_sdk(toolchain: Toolchain, log: Path) -> Verdict | None:
    """The C++ protocol library (`toolchain.cpp_sdk`), built in the sandbox when it is missing;
    None when it is there, else the failed build's verdict. The default place is named by the
    protocol's digest, so a changed protocol gets a library of its own."""
    sdk = toolchain.cpp_sdk
    if (sdk / "libarena_protocol.a").is_file():
        return None
    sdk.mkdir(parents=True, exist_ok=True)
    gen = f"{sdk}/generated"
    script = (
        f"mkdir -p {gen} && protoc -I {SDK_ROOT}/proto --cpp_out {gen} --grpc_out {gen} "
        f"--plugin=protoc-gen-grpc=/usr/bin/grpc_cpp_plugin arena/v1/arena.proto && cd /tmp && "
        f"g++ -O2 -std=c++17 -I{gen} -c {gen}/arena/v1/arena.pb.cc {gen}/arena/v1/arena.grpc.pb.cc "
        f"$(pkg-config --cflags grpc++ protobuf) && "
        f"ar rcs {sdk}/libarena_protocol.a arena.pb.o arena.grpc.pb.o"
    )
    verdict = sandbox_build(
        ["/bin/sh", "-c", script],
        source=toolchain.proto_root,
        out=sdk,
        output=log,
        limits=CPP_SDK_LIMITS,
        mounts=[Mount(toolchain.proto_root, f"{SDK_ROOT}/proto")],
    )
    return None if verdict.ok else verdict


def run_command(manifest: Manifest, tree: Path, toolchain: Toolchain) -> list[str]:
    """The version's command line in the sandbox (its tree is the working directory)."""
    entry = f"{tree}/{manifest.entry}"
    if manifest.language == "python":
        return [python_in_sandbox(toolchain), entry]
    if manifest.language == "node":
        return ["/usr/bin/node", entry]
    return [entry]
