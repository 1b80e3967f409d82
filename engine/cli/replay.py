"""`apollo replay`, `apollo fork` and `apollo diff`: reading past runs, and forking them.

Exit codes: 0 ok; 1 a difference (verify, rebuild) or an error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import msgspec

from engine.app.bootstrap import open_runtime, running_engine_url
from engine.app.operations import local_workers, new_run_id, outcome, run_events, watch_run
from engine.cli.endpoint_probe import probe_run_endpoints
from engine.cli.left_running import say_left_running, timed_out
from engine.cli.problem_args import new_run_id_arg
from engine.cli.run_lookup import indexed_run_ids, resolve_indexed
from engine.cli.solve import print_result
from engine.cli.submitted_settings import announce, submitted_config
from engine.cli.taken_run_ids import recorded_submission, short, taken
from engine.config.reference import translate
from engine.config.settings import Settings, read_config_file
from engine.console.argtypes import whole_number
from engine.errors import EngineError, RunNotFound
from engine.eventlog.port import EventLog
from engine.plugins import load_plugins
from engine.runtime.dispatcher import DecisionFailed, Dispatcher
from engine.runtime.histories import RunHistories
from events.codec import from_builtins, to_builtins
from events.record import Recorded, Unreadable
from events.run import ProblemSubmitted, RunStarted
from handlers.catalog import Catalog, ExtensionMissing, builtin_catalog
from handlers.context import Services
from handlers.projections.registry import projections
from handlers.routes import ROUTES
from handlers.run_settings import RunSettingsError, recorded_policy_model
from handlers.workflows import RUN_SECTIONS  # what a fork may override
from replay.diff import diff_runs, render_diff
from replay.errors import ReplayError
from replay.fork import ForkPlan, merge, plan_fork
from replay.rebuild import check_against_checkpoint, checkpoint_key
from replay.timeline_html import render_html
from replay.verify import ReplayResult, verify_run


def register(subparsers: Any) -> None:
    replay = subparsers.add_parser("replay", help="rebuild a run's projections from the log, or --verify its deciders")
    replay.add_argument("run_id", nargs="?", help="the run or a prefix of its id (omit with --all or --file)")
    replay.add_argument("--verify", action="store_true", help="re-run the deciders and compare with the log")
    replay.add_argument("--all", action="store_true", help="every run in the log")
    replay.add_argument("--file", metavar="NDJSON", help="a recorded history (`apollo show RUN --json` lines)")
    replay.add_argument("--json", action="store_true", help="one JSON object per run")
    replay.set_defaults(handler=_cmd_replay)

    fork = subparsers.add_parser("fork", help="a new run continuing a past run after one of its events")
    fork.add_argument("run_id", help="the parent run (or an unambiguous prefix of its id)")
    fork.add_argument("--at", type=whole_number(1), required=True, metavar="N",
                      help="keep the parent's events 1..N (the numbers `apollo show` prints)")
    fork.add_argument("--model", help="policy model of the fork (or scripted:FILE)")
    fork.add_argument("--model-url", help="OpenAI-compatible base URL of the fork's policy model")
    fork.add_argument("--max-tokens", type=whole_number(1),
                      help="the fork's policy completion tokens per reply (lowered to what the server can give)")
    fork.add_argument("--config", dest="fork_config", metavar="FILE",
                      help="YAML/TOML whose episode/models/evolve/branches sections override the parent's")
    fork.add_argument("--run-id", dest="fork_run_id", type=new_run_id_arg,
                      help="id of the new run (default: generated)")
    fork.add_argument("--no-wait", action="store_true", help="print the fork's run id and return at once")
    fork.add_argument("--no-probe", action="store_true", help="do not check the fork's model endpoints first")
    fork.add_argument("--timeout", type=float, default=None, help="give up waiting after this many seconds")
    fork.set_defaults(handler=_cmd_fork)

    diff = subparsers.add_parser("diff", help="where two runs diverge (first differing step, side by side)")
    diff.add_argument("run_a", help="a run (or an unambiguous prefix of its id)")
    diff.add_argument("run_b", help="the run to compare it with (or a prefix)")
    diff.add_argument("--html", metavar="FILE", help="also write both timelines side by side")
    diff.add_argument("--json", action="store_true")
    diff.set_defaults(handler=_cmd_diff)


# -- replay --------------------------------------------------------------------------


def _catalog(settings: Settings) -> Catalog:
    """What deciders get when replayed here: the built-ins and this configuration's plugins."""
    return load_plugins(settings).catalog()


async def _cmd_replay(args: argparse.Namespace, settings: Settings) -> int:
    args.catalog = _catalog(settings)
    if args.file:
        return await _replay_histories([read_history(Path(args.file))], None, args)
    if not (args.run_id or args.all):
        msg = "replay: give a RUN, --all or --file NDJSON"
        raise EngineError(msg)
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    try:
        if not args.all:
            skipped: list[Unreadable] = []
            [run_id] = await resolve_indexed(runtime.log, settings, args.run_id)
            records = await run_events(runtime, run_id, skipped)
            return await _replay_histories([records], runtime.log, args, {run_id: skipped})
        histories, unreadable, not_read = [], {}, 0
        for run_id in await indexed_run_ids(runtime.log, settings):  # the index picks them: no pass over the log
            skipped = unreadable[run_id] = []
            try:
                histories.append(await run_events(runtime, run_id, skipped))
            except RunNotFound as exc:  # nothing readable to replay: say so, go on with the others
                print(f"{run_id}: {exc}", file=sys.stderr)
                not_read += 1
        if not (histories or not_read):
            print("apollo replay: no runs recorded yet: nothing to replay", file=sys.stderr)
            return 0
        return await _replay_histories(histories, runtime.log, args, unreadable, not_read=not_read)
    finally:
        await runtime.close()


async def _replay_histories(histories: list[list[Recorded]], event_log: EventLog | None,
                            args: argparse.Namespace, unreadable: dict[str, list[Unreadable]] | None = None, *,
                            not_read: int = 0) -> int:
    """Replay each history; records that could not be read were never handled, so the
    replay goes on without them and each run's report names them. ``not_read`` runs had no
    readable event: they count among the runs, as not ok."""
    failed = not_read
    for records in histories:
        skipped = (unreadable or {}).get(records[0].event.run_id, [])
        if args.verify:
            try:
                result = await verify_run(records, catalog=args.catalog)
            except (ExtensionMissing, RunSettingsError) as exc:  # cannot be re-decided here: say why
                print(f"{records[0].event.run_id}: {exc}", file=sys.stderr)
                failed += 1
                continue
            failed += not result.ok
            _print_verify(result, as_json=args.json, unreadable=skipped)
        else:
            ok, report = await rebuild_report(records, event_log)
            failed += not ok
            if skipped:
                report["unreadable"] = [msgspec.to_builtins(found) for found in skipped]
            print(json.dumps(report) if args.json else _rebuild_text(report))
    total = len(histories) + not_read
    if total > 1 and not args.json:
        unread = f" ({not_read} with no readable event)" if not_read else ""
        print(f"{total - failed}/{total} runs ok{unread}")
    return 1 if failed else 0


async def rebuild_report(records: list[Recorded], event_log: EventLog | None) -> tuple[bool, dict[str, Any]]:
    """Rebuild every projection of one run and compare it with its live checkpoint."""
    run_id = records[0].event.run_id
    checks = []
    for name, projection in projections().items():
        data = await event_log.get_checkpoint(checkpoint_key(name, run_id)) if event_log else None
        check = check_against_checkpoint(records, projection, data)
        checks.append({"projection": name, "live_seq": check.live_seq, "ok": check.ok,
                       "differences": list(check.differences)})
    ok = all(c["ok"] for c in checks)
    return ok, {"run_id": run_id, "events": len(records), "last_seq": records[-1].seq, "ok": ok,
                "projections": checks}


def _rebuild_text(report: dict[str, Any]) -> str:
    lines = [f"{report['run_id']}: rebuilt from {report['events']} events (last seq {report['last_seq']})"]
    lines.extend(_unreadable_note(report["run_id"], report.get("unreadable", [])))
    for check in report["projections"]:
        if check["live_seq"] is None:
            verdict = "no live checkpoint (is the projector running?)"
        elif check["ok"]:
            verdict = f"equals the live checkpoint at seq {check['live_seq']}"
        else:
            verdict = f"DIFFERS from the live checkpoint at seq {check['live_seq']}"
        lines.append(f"  {check['projection']}: {verdict}")
        lines.extend(f"    {line}" for line in check["differences"][:20])
    return "\n".join(lines)


def _print_verify(result: ReplayResult, *, as_json: bool, unreadable: Sequence[Unreadable] = ()) -> None:
    if as_json:
        first = result.first_difference
        print(json.dumps({"run_id": result.run_id, "ok": result.ok, "events": result.events,
                          "checked": result.checked, "first_difference": None if first is None else {
                              "kind": first.kind, "n": first.n, "seq": first.seq, "cause_n": first.cause_n,
                              "cause_seq": first.cause_seq,
                              "handler": first.handler, "tag": first.tag, "fields": list(first.fields)},
                          "unreadable": [msgspec.to_builtins(found) for found in unreadable]}))
        return
    for line in _unreadable_note(result.run_id, [msgspec.to_builtins(found) for found in unreadable]):
        print(line)
    if result.ok:
        print(f"{result.run_id}: deterministic ({result.events} events, {result.checked} decider outputs "
              "reproduced byte for byte, 0 model/tool calls)")
        return
    print(f"{result.run_id}: NONDETERMINISTIC ({len(result.differences)} difference(s)); first:")
    assert result.first_difference is not None  # not ok implies a difference
    print(result.first_difference.describe())


def _unreadable_note(run_id: str, unreadable: list[dict[str, Any]]) -> list[str]:
    """Lines naming the records of a run that could not be read (and so were skipped)."""
    return [f"{run_id}: seq {found['seq']} on {found['subject']} is unreadable, skipped: {found['reason']}"
            for found in unreadable]


def read_history(path: Path) -> list[Recorded]:
    """A history file: one ``{"seq", "subject", "event"}`` JSON object per line."""
    records = []
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as exc:
        msg = f"cannot read {path}: {exc.strerror or exc}"
        raise EngineError(msg) from exc
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            row = msgspec.json.decode(line)
            event = from_builtins(row["event"])
            records.append(Recorded(int(row["seq"]), str(row["subject"]), event))  # type: ignore[arg-type]
        except (msgspec.DecodeError, KeyError, TypeError, ValueError, RecursionError) as exc:
            msg = f"{path}:{number}: not a recorded event: {exc}"
            raise EngineError(msg) from exc
    if not records:
        msg = f"{path}: no events"
        raise EngineError(msg)
    return records


def history_lines(records: Sequence[Recorded]) -> str:
    """The NDJSON form :func:`read_history` reads (same as `apollo show RUN --json`)."""
    return "".join(
        json.dumps({"seq": r.seq, "subject": r.subject, "event": to_builtins(r.event)}) + "\n" for r in records
    )


# -- fork ----------------------------------------------------------------------------


async def fork_run(event_log: EventLog, parent_run_id: str, *, at_seq: int, overrides: dict[str, Any],
                   run_id: str | None = None, catalog: Catalog | None = None) -> ForkPlan:
    """Create the fork in the log: mark its complete prefix handled, then append it."""
    parent = await event_log.read_run(parent_run_id)
    if not parent:
        msg = f"unknown run {parent_run_id!r}: no events recorded"
        raise EngineError(msg)
    try:
        plan = await plan_fork(parent, run_id=run_id or new_run_id("fork"), at_seq=at_seq, overrides=overrides,
                               catalog=catalog, submitted_at=datetime.now(UTC))
    except (ReplayError, ValueError, LookupError) as exc:
        raise EngineError(str(exc)) from exc
    for route_name, event_id in plan.handled:
        # The dispatcher's exactly-once key (engine/runtime/dispatcher.py: "<route>.<event id>").
        await event_log.mark_handled(f"{route_name}.{event_id}")
    last_seq = 0
    for event in plan.events:
        last_seq = (await event_log.append(event)).seq
    # Only effects' events are delivered: a copied event that only deciders continue (a
    # model's reply, say) is decided here, as the worker that recorded it would have.
    continuing = Dispatcher(event_log, ROUTES, Services(catalog=catalog or builtin_catalog()))
    try:
        await continuing.settle(plan.run_id, set(plan.frontier), last_seq, decide_roots=True)
    except DecisionFailed as exc:
        msg = f"fork {plan.run_id} was copied, but it cannot continue: {exc}"
        raise EngineError(msg) from exc
    return plan


class ForkAwareDispatcher(Dispatcher):
    """A dispatcher whose history reads of one run never interleave.

    A fork delivers many events of one run at once (its copied prefix); see
    :class:`_SerialHistories`. Copied requests whose results were copied too are
    skipped by the handled marks every effect route consults.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.histories = _SerialHistories(self.log)


class _SerialHistories(RunHistories):
    """RunHistories whose reads do not interleave.

    A fork delivers many events of one run at once; concurrent ``upto`` calls on the
    shared cache otherwise extend it from a stale last sequence (duplicated, reordered
    history). The engine's RunHistories needs the same guard (see the report/docs).
    """

    def __init__(self, event_log: EventLog) -> None:
        super().__init__(event_log)
        self._lock = asyncio.Lock()

    async def upto(self, run_id: str, seq: int) -> list[Recorded]:
        async with self._lock:
            return await super().upto(run_id, seq)


def fork_overrides(args: argparse.Namespace, parent_model: str) -> dict[str, Any]:
    """Settings the fork lays over the parent's: a config file, then --model/--model-url."""
    overrides: dict[str, Any] = {}
    if args.fork_config:
        raw = translate(read_config_file(Path(args.fork_config)))
        overrides = {key: raw[key] for key in RUN_SECTIONS if key in raw}
        for spec in overrides.get("models", {}).values():
            if isinstance(spec, dict):
                spec.pop("api_key", None)  # secrets never go into the log
    policy: dict[str, Any] = {}
    if args.model_url:
        policy["base_url"] = args.model_url
        if not args.model and parent_model.startswith("scripted:"):
            policy["model"] = "default"
    if args.model:
        policy["model"] = args.model
    if getattr(args, "max_tokens", None):
        policy["max_tokens"] = args.max_tokens
    if policy:
        models = overrides.setdefault("models", {})
        models["policy"] = {**models.get("policy", {}), **policy}
    return overrides


async def _cmd_fork(args: argparse.Namespace, settings: Settings) -> int:
    engine_url = settings.nats.url or running_engine_url(settings)
    engine_running = engine_url is not None
    runtime = await open_runtime(settings, start_server=True)
    try:
        [parent_id] = await resolve_indexed(runtime.log, settings, args.run_id)
        async with local_workers(runtime, enabled=not engine_running and not args.no_wait, kind=ForkAwareDispatcher):
            parent = await run_events(runtime, parent_id)
            at_seq = event_seq(parent, args.at)
            overrides = fork_overrides(args, _policy_model(parent))
            workflow, run_settings = _fork_settings(parent, overrides)
            policy = run_settings.get("models", {}).get("policy") or submitted_config(settings)["models"]["policy"]
            print(announce("fork", policy, engine_url, workers_here=not args.no_wait), file=sys.stderr)
            if args.fork_run_id is not None:
                await refuse_taken_fork_id(runtime.log, args.fork_run_id)
            if not args.no_probe:
                await probe_run_endpoints(run_settings, workflow, settings, nothing="no fork was made")
            plan = await fork_run(runtime.log, parent_id, at_seq=at_seq, overrides=overrides,
                                  run_id=args.fork_run_id, catalog=_catalog(settings))
            print(plan.run_id, flush=True)
            print(f"apollo fork: {plan.run_id} continues {plan.parent_run_id} after its event {args.at} "
                  f"(seq {plan.fork_seq}; {len(plan.events)} events copied, {len(plan.frontier)} to route again)",
                  file=sys.stderr)
            if args.no_wait:
                return 0
            try:
                records = await watch_run(runtime, plan.run_id, timeout=args.timeout) if plan.frontier else \
                    await run_events(runtime, plan.run_id)
            except asyncio.CancelledError:  # Ctrl-C: the fork itself is not stopped by that
                say_left_running("fork", plan.run_id, engine_running=engine_running)
                raise
            except TimeoutError as exc:  # --timeout: nor by that
                raise timed_out(exc, plan.run_id, engine_running=engine_running) from None
    finally:
        await runtime.close()

    result = outcome(records)
    print_result(result)
    return 1 if result["incomplete"] else 0


async def refuse_taken_fork_id(event_log: EventLog, run_id: str) -> None:
    """Refuse a ``--run-id`` a recorded run holds: the fork's copy would be a no-op there, and the
    command would report that other run as the fork."""
    recorded = await recorded_submission(event_log, run_id)
    if recorded is False:
        return
    if isinstance(recorded, ProblemSubmitted):
        held = (f"a fork of {recorded.parent_run_id}" if recorded.parent_run_id
                else f"question {short(recorded.question)}")
    else:
        held = "no readable submission"
    raise EngineError(taken(run_id, [held], flag="--run-id", nothing="no fork was made"))


def event_seq(records: Sequence[Recorded], number: int) -> int:
    """The stream sequence of a run's event ``number`` (1..n, as `apollo show` numbers them)."""
    if number > len(records):
        run_id = records[0].event.run_id
        msg = f"--at {number} is past the end of run {run_id}: it has {len(records)} events (1..{len(records)})"
        same = next((n for n, record in enumerate(records, 1) if record.seq == number), None)
        if same is not None:  # a stream sequence, as older `solve` output and the log show them
            msg += f"; {number} is the stream sequence of its event {same}: use --at {same}"
        raise EngineError(msg)
    return records[number - 1].seq


def _fork_settings(parent: list[Recorded], overrides: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The fork's workflow and the run settings it will record: the parent's, overrides laid over."""
    started = next((r.event for r in parent if isinstance(r.event, RunStarted)), None)
    if started is not None:
        return started.workflow, merge(started.settings, overrides)
    root = parent[0].event
    submitted = root if isinstance(root, ProblemSubmitted) else None
    config = submitted.config if submitted is not None else {}
    return (submitted.workflow if submitted is not None else "reason"), merge(config, overrides)


def _policy_model(records: list[Recorded]) -> str:
    for record in records:
        if isinstance(record.event, RunStarted):
            return recorded_policy_model(record.event.settings) or ""
    return ""


# -- diff ----------------------------------------------------------------------------


async def _cmd_diff(args: argparse.Namespace, settings: Settings) -> int:
    runtime = await open_runtime(settings, start_server=True, quiet=True)
    try:
        run_a, run_b = await resolve_indexed(runtime.log, settings, args.run_a, args.run_b)
        a = await run_events(runtime, run_a)
        b = await run_events(runtime, run_b)
    finally:
        await runtime.close()
    diff = diff_runs(a, b)
    if args.html:
        page = render_html([a, b], title=f"{args.run_a} vs {args.run_b}")
        Path(args.html).write_text(page, encoding="utf-8")  # noqa: ASYNC240 - one file, after the reads
        print(f"wrote {args.html}", file=sys.stderr)
    if args.json:
        print(json.dumps(msgspec.to_builtins(diff)))
    else:
        print(render_diff(diff))
    return 0
