"""`apollo cancel RUN [--reason TEXT]`: end a run that will not finish by itself (its `solve` was
interrupted, its model server is gone), recording why; workers then do no more of its work."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from engine.app.bootstrap import open_runtime
from engine.cli.run_lookup import resolve_indexed
from engine.config.settings import Settings
from engine.runtime.cancellation import cancel_run
from events.base import tag_of
from events.run import RunCancelled

DEFAULT_REASON = "cancelled with apollo cancel"


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser("cancel", help="end a run before it finishes, recording why")
    parser.add_argument("run_id", metavar="RUN", help="the run's id or an unambiguous prefix of it")
    parser.add_argument("--reason", default=DEFAULT_REASON, help="why, kept in the run's log and shown by runs/show")
    parser.set_defaults(handler=_cmd_cancel)


async def _cmd_cancel(args: argparse.Namespace, settings: Settings) -> int:
    reason = " ".join(args.reason.split()) or DEFAULT_REASON
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    try:
        [run_id] = await resolve_indexed(runtime.log, settings, args.run_id)
        cancelled, ending = await cancel_run(runtime.log, run_id, reason=reason)
    finally:
        await runtime.close()
    if cancelled is not None:
        print(f"apollo cancel: {run_id} cancelled: {reason}", file=sys.stderr)
        return 0
    if isinstance(ending, RunCancelled):  # asking twice gets the same answer, not an error
        print(f"apollo cancel: {run_id} was already cancelled by {ending.by or '?'}: {ending.reason}", file=sys.stderr)
        return 0
    ended = tag_of(type(ending)).removeprefix("run.") if ending is not None else "ended"
    print(f"apollo: error: run {run_id} has already {ended}: nothing to cancel", file=sys.stderr)
    return 1
