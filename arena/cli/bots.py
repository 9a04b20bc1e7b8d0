"""`arena bot submit|versions|report|disable|build`: submitted bots (docs/SUBMIT.md).

The owner's commands take the bot's token (`--token`, or the environment's ARENA_BOT_TOKEN) and
work on the arena's store, as `arena bots` does; the servers of the arena (`arena serve
--hosted`) build, test and run what is submitted. `disable` and `build` are the operator's.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from .common import CliError

STORE_HELP = "the arena store: a SQLite file (default arena.db) or a postgresql:// URL"


def register(commands: Any) -> None:
    bot = commands.add_parser(
        "bot",
        help="submit a bot's code, list its versions and their states",
        description="Submitted bots: the arena builds, tests and runs them in its sandbox (docs/SUBMIT.md).",
    )
    bot.set_defaults(
        run=lambda args: bot.error("choose submit, versions, report, disable or build"), parser=bot
    )
    actions = bot.add_subparsers(dest="action", metavar="ACTION")

    submit = actions.add_parser(
        "submit",
        help="submit a directory or archive with an arena-bot.toml as a new version",
        description="Store the code as a new version of the token's bot (state building); the arena's "
        "servers build and test it, and it becomes active or rejected. The same code again is the same "
        "version.",
    )
    submit.add_argument("source", type=Path, help="a directory, or a .tar(.gz) or .zip archive")
    submit.add_argument(
        "--wait", type=float, default=0.0, metavar="S", help="wait up to S seconds for the verdict"
    )
    versions = actions.add_parser("versions", help="the bot's versions and their states")
    report = actions.add_parser("report", help="a version's build output and conformance table")
    report.add_argument("version", type=int, help="the version's number")
    for sub, run in ((submit, _cmd_submit), (versions, _cmd_versions), (report, _cmd_report)):
        sub.add_argument("--token", default=os.environ.get("ARENA_BOT_TOKEN", ""), help="the bot's token")
        sub.add_argument("--json", action="store_true", help="one JSON document")
        sub.add_argument("--store", default="arena.db", metavar="PATH|URL", help=STORE_HELP)
        sub.set_defaults(run=run, parser=sub)

    disable = actions.add_parser(
        "disable", help="take a version out (operator)", description="The version never runs again."
    )
    disable.add_argument("name", help="the bot")
    disable.add_argument("version", type=int, help="the version's number")
    disable.add_argument("--reason", default="", help="shown to the owner")
    build = actions.add_parser(
        "build",
        help="build and test the waiting versions here (operator)",
        description="What `arena serve --hosted` does in the background, once, without a server.",
    )
    build.add_argument("--work-dir", type=Path, default=Path("arena-work"), help="built trees and logs")
    for sub, run in ((disable, _cmd_disable), (build, _cmd_build)):
        sub.add_argument("--store", default="arena.db", metavar="PATH|URL", help=STORE_HELP)
        sub.set_defaults(run=run, parser=sub)


def _open(url: str) -> Any:
    from ..standing.store import Store, StoreError

    if "://" not in url and not Path(url).is_file():
        raise CliError(f"{url}: no arena store here")
    try:
        return Store(url)
    except StoreError as exc:
        raise CliError(str(exc)) from None


def _row(version: Any) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(version.submitted_ms / 1000))
    language = version.manifest.get("language", "")
    reason = f"  {version.reason}" if version.reason else ""
    return f"{version.version:>4}  {version.state:<9} {language:<7} {version.digest[:12]}  {when}{reason}"


def _cmd_submit(args: argparse.Namespace) -> int:
    from ..standing.store import StoreError
    from ..standing.versions import Versions
    from ..submissions.archive import ArchiveError
    from ..submissions.manifest import ManifestError
    from ..submissions.submit import SubmitError, submit

    store = _open(args.store)
    try:
        version, created = submit(store, args.token, args.source)
        deadline = time.monotonic() + args.wait
        while version.state in ("building", "testing") and time.monotonic() < deadline:
            time.sleep(0.5)
            version = Versions(store).version(version.bot, version.version)
    except (SubmitError, ArchiveError, ManifestError, StoreError) as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    if args.json:
        print(json.dumps({**version.to_dict(), "new": created}, indent=2))
    else:
        print(
            f"{version.bot} version {version.version}: {version.state}"
            + ("" if created else " (the same code)")
        )
        if version.reason:
            print(version.reason)
    return 1 if version.state == "rejected" else 0


def _cmd_versions(args: argparse.Namespace) -> int:
    from ..submissions.submit import SubmitError, versions

    store = _open(args.store)
    try:
        name, rows = versions(store, args.token)
    except SubmitError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    if args.json:
        print(json.dumps({"bot": name, "versions": [v.to_dict() for v in rows]}, indent=2))
        return 0
    if not rows:
        print(f"{name} has no submitted version")
    for version in rows:
        print(_row(version))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    from ..submissions.submit import SubmitError, versions

    store = _open(args.store)
    try:
        _name, rows = versions(store, args.token)
    except SubmitError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    found = [v for v in rows if v.version == args.version]
    if not found:
        raise CliError(f"no version {args.version}")
    if args.json:
        print(json.dumps(found[0].to_dict(report=True), indent=2))
    else:
        print(_row(found[0]))
        print(found[0].report)
    return 0


def _cmd_disable(args: argparse.Namespace) -> int:
    from ..standing.store import StoreError
    from ..standing.versions import Versions

    store = _open(args.store)
    try:
        version = Versions(store).disable(args.name, args.version, args.reason)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    print(_row(version))
    return 0


def _cmd_build(args: argparse.Namespace) -> int:
    import trio

    from ..standing.versions import Versions
    from ..submissions.accept import Builder
    from ..submissions.processes import RuntimeConfig

    store = _open(args.store)
    built = 0
    try:
        builder = Builder(Versions(store), RuntimeConfig(args.work_dir.resolve()), f"cli:{os.getpid()}")

        async def all_waiting() -> int:
            count = 0
            while await builder.one():
                count += 1
            return count

        built = trio.run(all_waiting)
    finally:
        store.close()
    print(f"{built} version(s) built and tested", file=sys.stderr)
    return 0
