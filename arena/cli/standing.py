"""`arena bots register|list|revoke|resume` and `arena standings`: the operator's side of the
standing arena, run against the server's store (the server may be running: it notices a
revocation within a second, and reads registrations and pauses when a bot joins)."""

from __future__ import annotations

import argparse
import json
import sys
import time
from typing import Any

from ..engine import VARIANT_NAMES
from .common import CliError, input_kind, positive_int, variant_list

STORE_HELP = "the arena store: a SQLite file (default arena.db) or a postgresql:// URL"


def register(commands: Any) -> None:
    bots = commands.add_parser(
        "bots",
        help="register, list, revoke or resume the standing arena's bots",
        description="Manage the bots registered with a standing arena (`arena serve`), in its store.",
    )
    bots.set_defaults(run=lambda args: bots.error("choose register, list, revoke or resume"), parser=bots)
    actions = bots.add_subparsers(dest="action", metavar="ACTION")

    reg = actions.add_parser(
        "register", help="register a bot; prints its secret token once", description="Register a bot."
    )
    reg.add_argument("name", help="1-40 letters, digits, '-', '_' or '.'")
    reg.add_argument(
        "--variants",
        type=variant_list,
        default=(),
        metavar="V,V",
        help=f"variants it may play (default every variant of the arena): {', '.join(VARIANT_NAMES)}",
    )
    listing = actions.add_parser("list", help="list the registered bots", description="List registered bots.")
    listing.add_argument("--json", action="store_true", help="one JSON document")
    revoke = actions.add_parser(
        "revoke",
        help="refuse a bot's token from now on",
        description="Revoke a bot's token; a running server closes its open streams within a second.",
    )
    revoke.add_argument("name", help="the registered bot's name")
    resume = actions.add_parser(
        "resume", help="lift a bot's pause for faults", description="Lift a pause before it runs out."
    )
    resume.add_argument("name", help="the registered bot's name")
    for sub, run in (
        (reg, _cmd_register),
        (listing, _cmd_list),
        (revoke, _cmd_revoke),
        (resume, _cmd_resume),
    ):
        sub.add_argument("--store", default="arena.db", metavar="PATH|URL", help=STORE_HELP)
        sub.set_defaults(run=run, parser=sub)

    standings = commands.add_parser(
        "standings",
        help="the standing arena's ratings, results and faults",
        description="Each rated bot's rating (mu - 3 sigma), matches, mean score per deal, fault rate "
        "and recent matches with their replays, best first within each variant.",
    )
    standings.add_argument("--variant", choices=VARIANT_NAMES, help="one variant only")
    standings.add_argument(
        "--recent",
        type=positive_int,
        default=5,
        help="recent matches per bot (default 5, as AdminService.GetStandings with recent unset)",
    )
    standings.add_argument("--json", action="store_true", help="one JSON document")
    standings.add_argument("--store", default="arena.db", metavar="PATH|URL", help=STORE_HELP)
    standings.set_defaults(run=_cmd_standings, parser=standings)


def _open(args: argparse.Namespace, *, existing: bool = True) -> Any:
    from pathlib import Path

    from ..files import ARENA_STORE
    from ..standing.store import Store, StoreError

    url: str = args.store
    if "://" not in url and Path(url).exists():
        input_kind(Path(url), ARENA_STORE, "--store")
    if existing and "://" not in url and not Path(url).is_file():
        raise CliError(
            f"{url}: no arena store here (start `arena serve --store {url}` or register a bot first)"
        )
    try:
        return Store(url)
    except StoreError as exc:
        raise CliError(str(exc)) from None


def _store_call(args: argparse.Namespace, method: str, *call_args: Any, existing: bool = True) -> Any:
    from ..standing.store import StoreError

    store = _open(args, existing=existing)
    try:
        return getattr(store, method)(*call_args)
    except StoreError as exc:
        raise CliError(str(exc)) from None
    finally:
        store.close()


def _cmd_register(args: argparse.Namespace) -> int:
    bot, token = _store_call(args, "register_bot", args.name, args.variants, existing=False)
    variants = ", ".join(bot.variants) or "every variant of the arena"
    print(f"registered {bot.name} ({variants})", file=sys.stderr)
    print("its token, shown only this once (the store keeps a hash):", file=sys.stderr)
    print(token)
    return 0


def _cmd_list(args: argparse.Namespace) -> int:
    bots = _store_call(args, "bots")
    rows = [
        {
            "name": b.name,
            "variants": list(b.variants),
            "state": b.state(),
            "reason": b.pause_reason if b.state() == "paused" else "",
            "paused_until": _when(b.paused_until_ms) if b.state() == "paused" else "",
            "registered": _when(b.registered_ms),
        }
        for b in bots
    ]
    if args.json:
        print(json.dumps({"bots": rows}, indent=2))
        return 0
    if not rows:
        print("no bots registered")
    for row in rows:
        variants = ",".join(row["variants"]) or "all"
        extra = f"  {row['reason']} (until {row['paused_until']})" if row["state"] == "paused" else ""
        print(f"{row['name']:<24} {row['state']:<8} {variants:<30} {row['registered']}{extra}")
    return 0


def _cmd_revoke(args: argparse.Namespace) -> int:
    if _store_call(args, "bot", args.name).revoked:  # nothing to do is not success (exit status 1)
        raise CliError(f"{args.name} is revoked already; nothing changed")
    bot = _store_call(args, "revoke_bot", args.name)
    print(f"revoked {bot.name}")
    return 0


def _cmd_resume(args: argparse.Namespace) -> int:
    state = _store_call(args, "bot", args.name).state()
    if state != "paused":  # a revoked bot stays revoked: resuming it would only look like success
        why = "a revoked bot cannot play again" if state == "revoked" else "it is not paused"
        raise CliError(f"{args.name} is {state}: nothing to resume ({why})")
    bot = _store_call(args, "resume_bot", args.name)
    print(f"{bot.name} is {bot.state()}")
    return 0


def _cmd_standings(args: argparse.Namespace) -> int:
    table = _store_call(args, "standings", args.variant or "", args.recent)
    if args.json:
        print(json.dumps({"standings": [s.to_dict() for s in table]}, indent=2))
        return 0
    if not table:
        print("no rated matches yet")
        return 0
    variant = None
    for rank, standing in enumerate(table, 1):
        if standing.variant != variant:
            variant = standing.variant
            print(f"\n{variant}" if rank > 1 else variant)
            print(
                f"  {'#':>3} {'bot':<24} {'rating':>7} {'mu':>6} {'sigma':>5} {'matches':>7} "
                f"{'score/deal':>10} {'adjusted/deal':>13} {'faults/dec':>10}  {'state':<7}  "
                "version (latest Hello)"
            )
            rank_in_variant = 0
        rank_in_variant += 1
        print(
            f"  {rank_in_variant:>3} {standing.bot:<24} {standing.rating:>7.2f} {standing.mu:>6.2f} "
            f"{standing.sigma:>5.2f} {standing.matches:>7} {standing.mean_score_per_deal:>10.2f} "
            f"{_adjusted(standing):>13} {standing.fault_rate:>10.4f}  "
            f"{standing.state:<7}  {_reported(standing)}"
        )
        for match in standing.recent:
            seats = " ".join(f"{bot}:{score}" for bot, score in zip(match.seats, match.scores, strict=True))
            print(f"        {_when(match.finished_ms)} {match.termination:<9} {seats}  {match.replay}")
    return 0


def _adjusted(standing: Any) -> str:
    """Mean luck-adjusted points per deal (docs/ARENA.md, "Luck taken out of the ratings"); "not
    adjusted" where the variant is rated on raw points or no match of the bot was adjusted."""
    value = standing.mean_adjusted_score_per_deal
    return "not adjusted" if value is None else f"{value:.2f}"


def _reported(standing: Any) -> str:
    """The version of the bot's latest recorded Hello, and its name there when not the bot's; for a
    bot the arena runs, the submitted version that played (docs/SUBMIT.md)."""
    return str(standing.reported_version() or "–")


def _when(ms: int) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ms / 1000)) if ms else ""
