"""A version's way from `building` to `active` or `rejected`: its build in the sandbox, then the
conformance kit against it in the sandbox (its only way out the kit server's Unix socket).

The owner reads the report (`arena bot report`): the build's output and the kit's table.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import structlog
import trio

from ..conformance.cases import cases_for
from ..conformance.kit import run_cases, table
from ..engine import VARIANT_NAMES
from ..referee.position import PositionRunner
from ..sandbox import Sandbox
from ..standing.versions import VersionRecord, Versions
from .archive import pack, unpack
from .build import build
from .manifest import Manifest
from .processes import RuntimeConfig, Trees, start_version

log = structlog.get_logger(component="submissions")

REPORT_TAIL = 20_000  # characters of a build's output kept in the report
CASE_WALL_S = 120.0  # a conformance process's backstop


class SandboxLauncher:
    """Starts the version in a sandbox for one of the kit's processes (`kit.Launch`)."""

    def __init__(self, version: VersionRecord, tree: Path, config: RuntimeConfig, socket: Path) -> None:
        self.version = version
        self.tree = tree
        self.config = config
        self.socket = socket

    async def __call__(
        self, owner: PositionRunner, seat: int, token: str, command: str, address: str, log_path: Path
    ) -> object:
        env = {"ARENA_TOKEN": token, "ARENA_SEAT": str(seat), "ARENA_MATCH_ID": owner.match_id}
        try:
            box: Sandbox = await trio.to_thread.run_sync(
                start_version, self.version, self.tree, self.config, self.socket, env, log_path, CASE_WALL_S
            )
        except OSError as exc:
            owner.mark_crashed(seat, f"cannot start the sandbox: {exc}")
            return None
        try:
            verdict = await trio.to_thread.run_sync(box.wait, abandon_on_cancel=True)
            if verdict is not None and not owner.done.is_set():
                owner.mark_crashed(seat, f"the bot ended before its match: {verdict.describe()}")
            return verdict
        finally:
            with trio.CancelScope(shield=True):
                await trio.to_thread.run_sync(box.stop)


class Builder:
    """Claims the versions waiting in the store and takes each to active or rejected."""

    def __init__(self, versions: Versions, config: RuntimeConfig, worker: str) -> None:
        self.versions = versions
        self.config = config
        self.worker = worker

    async def run(self, poll_s: float) -> None:
        while True:
            try:
                busy = await self.one()
            except Exception as exc:  # the store went away: try again later
                log.warning("cannot build submitted versions now", error=str(exc))
                busy = False
            if not busy:
                await trio.sleep(poll_s)

    async def one(self) -> bool:
        """Build and test one waiting version; False when none waits."""
        version = await trio.to_thread.run_sync(self.versions.claim, self.worker)
        if version is None:
            return False
        await self.process(version)
        return True

    async def process(self, version: VersionRecord) -> None:
        name = f"{version.bot} version {version.version}"
        manifest = Manifest.from_dict(version.manifest)
        work = Path(tempfile.mkdtemp(prefix=f"build-{version.bot}-", dir=self._dir()))
        try:
            source, out, build_log = work / "src", work / "out", work / "build.log"
            archive = await trio.to_thread.run_sync(self.versions.archive, version.digest)
            await trio.to_thread.run_sync(unpack, archive, source)
            out.mkdir()
            log.info("building", bot=version.bot, version=version.version, language=manifest.language)
            verdict = await trio.to_thread.run_sync(
                build, manifest, source, out, build_log, self.config.toolchain
            )
            output = _tail(build_log)
            if not verdict.ok:
                reason = f"build: {verdict.describe()}"
                log.warning("build failed", bot=version.bot, version=version.version, reason=reason)
                await trio.to_thread.run_sync(
                    self.versions.reject, version.bot, version.version, reason, output
                )
                return
            tree, digest = await trio.to_thread.run_sync(pack, out)
            report = f"build: {verdict.describe()} in {verdict.wall_s:.1f} s\n{output}"
            await trio.to_thread.run_sync(
                self.versions.built, version.bot, version.version, tree, digest, report
            )
            built = await trio.to_thread.run_sync(self.versions.version, version.bot, version.version)
            await self.test(built, report)
        except Exception as exc:
            log.exception("a version could not be built", bot=version.bot, version=version.version)
            reason = f"the arena could not build {name}: {exc}"
            await trio.to_thread.run_sync(self.versions.reject, version.bot, version.version, reason, "")
        finally:
            shutil.rmtree(work, ignore_errors=True)

    async def test(self, version: VersionRecord, report: str) -> None:
        """The conformance kit against the built version, in the sandbox."""
        if version.state != "testing":
            return  # disabled meanwhile
        tree = await trio.to_thread.run_sync(
            Trees(self.versions, self.config.work_dir / "trees").tree, version
        )
        variants = list(version.manifest.get("variants") or VARIANT_NAMES)
        cases = cases_for(variants)
        logs = Path(tempfile.mkdtemp(prefix="kit-", dir=self._dir()))
        socket = Path(tempfile.mkdtemp(prefix="k", dir="/tmp")) / "s.sock"  # short: a socket's path limit
        try:
            launcher = SandboxLauncher(version, tree, self.config, socket)
            results = await run_cases("", cases, log_dir=logs, unix=socket, launcher=launcher)
            outputs = _outputs(logs) if any(not r.passed for r in results) else ""
        finally:
            shutil.rmtree(logs, ignore_errors=True)
            shutil.rmtree(socket.parent, ignore_errors=True)
        failed = [r for r in results if not r.passed]
        report = f"{report}\nconformance:\n{table(results)}\n{outputs}"
        if failed:
            first = failed[0]
            reason = (
                f"conformance: {len(failed)} of {len(results)} cases failed "
                f"(first: {first.case.name}: {first.detail})"
            )
            await trio.to_thread.run_sync(self.versions.reject, version.bot, version.version, reason, report)
            log.warning("version rejected", bot=version.bot, version=version.version, reason=reason)
        else:
            await trio.to_thread.run_sync(self.versions.activate, version.bot, version.version, report)
            log.info("version active", bot=version.bot, version=version.version)

    def _dir(self) -> Path:
        path = self.config.work_dir / "builds"
        path.mkdir(parents=True, exist_ok=True)
        return path


def _outputs(logs: Path) -> str:
    """The bot's output in each of the kit's processes (the owner's to read), the ends of them."""
    parts = [f"--- {path.name}\n{_tail(path)[-2000:]}" for path in sorted(logs.glob("*.log"))]
    return "\n".join(parts)[-REPORT_TAIL:]


def _tail(path: Path) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError:
        return ""
    return text[-REPORT_TAIL:]
