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
        run=lambda args: bot.error("choose submit, versions, report, output, disable or build"), parser=bot
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
    output = actions.add_parser("output", help="what the bot printed in a match the arena hosted it in")
    output.add_argument("match_id", help="the match (arena standings lists them)")
    for sub, run in (
        (submit, _cmd_submit),
        (versions, _cmd_versions),
        (report, _cmd_report),
        (output, _cmd_output),
    ):
        sub.add_argument("--token", default=os.environ.get("ARENA_BOT_TOKEN", ""), help="the bot's token")
        sub.add_argument("--json", action="store_true", help="one JSON document")
        sub.add_argument("--store", default="arena.db", metavar="PATH|URL", help=STORE_HELP)
        sub.add_argument(
            "--server",
            metavar="HOST:PORT",
            help="over the API instead (SubmissionService of a server started with --hosted)",
        )
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


def _row(version: dict[str, Any]) -> str:
    when = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(version["submitted_ms"] / 1000))
    reason = f"  {version['reason']}" if version["reason"] else ""
    return (
        f"{version['version']:>4}  {version['state']:<9} {version['language']:<7} "
        f"{version['digest'][:12]}  {when}{reason}"
    )


def _cmd_submit(args: argparse.Namespace) -> int:
    from ..standing.store import StoreError
    from ..standing.versions import Versions
    from ..submissions.archive import ArchiveError
    from ..submissions.manifest import ManifestError
    from ..submissions.submit import SubmitError, submit

    if args.server:
        return _print_submitted(args, *_api_submit(args))
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
    return _print_submitted(args, version.to_dict(), created)


def _print_submitted(args: argparse.Namespace, version: dict[str, Any], created: bool) -> int:
    if args.json:
        print(json.dumps({**version, "new": created}, indent=2))
    else:
        same = "" if created else " (the same code)"
        print(f"{version['bot']} version {version['version']}: {version['state']}{same}")
        if version["reason"]:
            print(version["reason"])
    return 1 if version["state"] == "rejected" else 0


def _api(args: argparse.Namespace, method: str, request: Any) -> Any:
    """One SubmissionService call with the bot's token; CliError with the server's reason."""
    import grpc

    from ..v1 import arena_pb2_grpc as pb_grpc

    with grpc.insecure_channel(args.server) as channel:
        stub = pb_grpc.SubmissionServiceStub(channel)  # type: ignore[no-untyped-call]
        metadata = [("authorization", f"Bearer {args.token}")]
        try:
            return getattr(stub, method)(request, metadata=metadata, timeout=60)
        except grpc.RpcError as exc:
            raise CliError(f"{args.server}: {exc.details() or exc.code().name}") from None


def _from_message(message: Any) -> dict[str, Any]:
    keys = ("bot", "version", "digest", "language", "state", "reason", "submitted_ms")
    return {key: getattr(message, key) for key in keys}


def _api_submit(args: argparse.Namespace) -> tuple[dict[str, Any], bool]:
    from ..submissions.archive import ArchiveError, read_submission
    from ..submissions.manifest import ManifestError
    from ..v1 import arena_pb2 as pb

    try:
        data = read_submission(args.source).data  # checked here first; the server checks again
    except (ArchiveError, ManifestError) as exc:
        raise CliError(str(exc)) from None
    answer = _api(args, "SubmitVersion", pb.SubmitVersionRequest(archive=data))
    version = _from_message(answer.version)
    deadline = time.monotonic() + args.wait
    while version["state"] in ("building", "testing") and time.monotonic() < deadline:
        time.sleep(0.5)
        listed = _api(args, "ListVersions", pb.ListVersionsRequest())
        version = next(_from_message(v) for v in listed.versions if v.version == version["version"])
    return version, bool(answer.created)


def _listed(args: argparse.Namespace, reports: bool) -> list[dict[str, Any]]:
    """The token's bot's versions, over the API (`--server`) or from the store."""
    if args.server:
        from ..v1 import arena_pb2 as pb

        listed = _api(args, "ListVersions", pb.ListVersionsRequest(reports=reports))
        return [{**_from_message(v), "report": v.report} for v in listed.versions]
    from ..submissions.submit import SubmitError, versions

    store = _open(args.store)
    try:
        _name, rows = versions(store, args.token)
    except SubmitError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    return [v.to_dict(report=True) for v in rows]


def _cmd_versions(args: argparse.Namespace) -> int:
    rows = [{k: v for k, v in row.items() if k != "report"} for row in _listed(args, False)]
    if args.json:
        print(json.dumps({"versions": rows}, indent=2))
        return 0
    if not rows:
        print("no submitted version")
    for version in rows:
        print(_row(version))
    return 0


def _cmd_report(args: argparse.Namespace) -> int:
    found = [v for v in _listed(args, True) if v["version"] == args.version]
    if not found:
        raise CliError(f"no version {args.version}")
    if args.json:
        print(json.dumps(found[0], indent=2))
    else:
        print(_row(found[0]))
        print(found[0]["report"])
    return 0


def _cmd_output(args: argparse.Namespace) -> int:
    if args.server:
        raise CliError("arena bot output reads the store: give --store, not --server")
    from ..standing.versions import Versions
    from ..submissions.submit import SubmitError, owner

    store = _open(args.store)
    try:
        bot = owner(store, args.token)
        seats = Versions(store).outputs(bot.name, args.match_id)
    except SubmitError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()
    if not seats:
        raise CliError(f"{bot.name} was not hosted in match {args.match_id}")
    if args.json:
        rows = [{"seat": seat, "version": version, "output": text} for seat, version, text in seats]
        print(json.dumps({"bot": bot.name, "match_id": args.match_id, "seats": rows}, indent=2))
        return 0
    for seat, version, text in seats:
        print(f"--- {bot.name} version {version}, seat {seat}")
        print(text, end="" if text.endswith("\n") or not text else "\n")
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
    print(_row(version.to_dict()))
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
