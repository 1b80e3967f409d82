"""`apollo run --dataset FILE`: many problems, K samples each, resumable, with metrics.

A re-run resumes only runs made with the same settings: every run id carries the digest
of the resolved run settings (:mod:`engine.config.run_identity`), and each submission carries
those settings, so whichever worker takes it runs exactly what the digest names. A
sample whose run could not be completed (model server or engine failure) is retried on
the next invocation under a new attempt id (``-r1``...), leaving the failed run in the log.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from engine.app.bootstrap import Runtime, open_runtime, running_engine_url, settings_for_run
from engine.app.operations import local_workers, submission, submit, warn_if_no_worker
from engine.cli.endpoint_probe import fit_settings_to_servers
from engine.cli.left_running import say_left_unfinished
from engine.cli.problem_args import apply_model_flags
from engine.cli.progress import Progress
from engine.cli.results_file import write_results
from engine.cli.run_header import default_results_path, header_lines, policy_fields
from engine.cli.tracking import Trackers, flat_numbers, open_trackers, parse_kinds
from engine.config.merge import deep_merge
from engine.config.run_identity import other_digests, settings_digest
from engine.config.settings import Settings, validate
from engine.console.argtypes import number, whole_number
from engine.datasets import (
    DatasetError,
    DatasetLoad,
    Problem,
    grader_metadata,
    group_id_for,
    load_problems,
    run_id_for,
)
from engine.errors import EngineError
from engine.runtime.processes import freeze_startup_heap
from engine.runtime.signals import stop_if_interrupted
from events.base import Event
from events.run import RUN_ENDINGS, ProblemSubmitted
from events.subjects import RUN_PREFIX
from handlers.evolve.round_accuracy import evolve_metrics, render, round_rows
from handlers.workflows import DEFAULT_WORKFLOW, WORKFLOW_NAMES
from replay.dataset_scores import compute_metrics, could_not_complete, render_table, to_jsonable
from replay.failure_reasons import failure_reasons, render_reasons
from replay.results import result_row, sample_result
from replay.sampling_stats import render_stats, sampling_stats
from replay.sampling_stats import to_jsonable as stats_jsonable

_positive = whole_number(1)


def register(subparsers: Any) -> None:
    run = subparsers.add_parser("run", help="run a dataset: K samples per problem, metrics at the end")
    run.add_argument("--dataset", help="JSONL or parquet file of problems (default: the config's dataset)")
    run.add_argument("--limit", type=_positive, help="only the first N usable problems")
    run.add_argument("--samples", type=_positive,
                     help="samples per problem (K; default: env.rollout.n, evolve.test_times for evolve, else 1)")
    run.add_argument("--concurrency", type=_positive,
                     help="runs in flight at once (default: evolve.problem_max_workers for evolve, else 16)")
    run.add_argument("--workflow", default=DEFAULT_WORKFLOW, choices=WORKFLOW_NAMES)
    run.add_argument("--out", help="per-sample results JSONL (default: "
                                   "results/<dataset>-<workflow>-<model>-<settings digest>.jsonl)")
    run.add_argument("--model", help="policy model name (or scripted:FILE)")
    run.add_argument("--model-url", help="OpenAI-compatible base URL of the policy model")
    run.add_argument("--max-steps", type=_positive, help="step budget of each episode")
    run.add_argument("--temperature", type=number(0), help="policy sampling temperature")
    run.add_argument("--top-p", type=_top_p, help="policy nucleus sampling, in (0, 1]")
    run.add_argument("--top-k", type=_top_k, help="policy top-k sampling (-1: off)")
    run.add_argument("--max-tokens", type=_positive, help="policy completion tokens per reply")
    run.add_argument("--no-retry-failed", action="store_true",
                     help="keep samples whose run could not be completed instead of retrying them")
    run.add_argument("--no-probe", action="store_true", help="do not check the model endpoint before starting")
    run.add_argument("--json", action="store_true", help="print the metrics as JSON")
    run.add_argument("--track", type=parse_kinds, default=[], metavar="KINDS",
                     help="also log metrics to tensorboard and/or wandb (offline), comma-separated; "
                          "a CSV beside the results file is always written")
    run.set_defaults(handler=_cmd_run)


def _top_p(text: str) -> float:
    value = number(0)(text)
    if not 0 < value <= 1:
        raise argparse.ArgumentTypeError(f"must be above 0 and at most 1, not {value:g}")
    return value


def _top_k(text: str) -> int:
    value = whole_number(-1)(text)
    if value == 0:
        raise argparse.ArgumentTypeError("must be -1 (off) or 1 or more, not 0")
    return value


SAMPLING_FLAGS = {"temperature": "temperature", "top_p": "top_p", "top_k": "top_k", "max_tokens": "max_tokens"}
"""``apollo run`` flag (argparse dest) -> policy model setting it overrides."""


class _Job(msgspec.Struct, frozen=True):
    problem: Problem
    sample: int
    attempt: int
    run_id: str


async def _cmd_run(args: argparse.Namespace, settings: Settings) -> int:
    settings = with_sampling_flags(apply_model_flags(settings, args), args)
    if not args.no_probe:  # before the digest: the lowered max_tokens is a setting of these runs
        settings = await fit_settings_to_servers(settings)
    load = _load(args, settings)
    samples = samples_per_problem(args, settings)
    args.concurrency = runs_in_flight(args, settings)
    name = f"{load.name}_{args.workflow}"  # one plain id part keeps run ids readable
    run_config = settings.run_settings()
    if args.max_steps:
        run_config = deep_merge(run_config, {"episode": {"max_steps": args.max_steps}})
    try:
        digest = settings_digest(settings_for_run(settings, run_config), workflow=args.workflow)
    except ValueError as exc:
        raise EngineError(str(exc)) from exc
    out = Path(args.out) if args.out else default_results_path(load.name, args.workflow,
                                                               settings.model_for("policy").model, digest)
    trackers = open_trackers(out.with_name(out.stem + "-metrics.csv"), args.track, name=f"{name}-{digest}",
                             config={"dataset": load.name, "workflow": args.workflow, "samples": samples,
                                     "settings_digest": digest, **flat_numbers(run_config)}, resume=True)
    for place in trackers.places:  # files the user did not name: say where they go
        print(f"apollo run: tracking to {place}", file=sys.stderr)
    engine_url = settings.nats.url or running_engine_url(settings)
    engine_running = engine_url is not None
    if engine_running:
        print("apollo run: the running engine's workers run these runs with this command's settings "
              "(--config, flags, APOLLO_*), not the engine's own", file=sys.stderr)
    runtime = await open_runtime(settings, start_server=True)
    freeze_startup_heap()  # a dataset run lasts: its workers need not rescan start-up objects
    try:
        submitted = await _run_ids_with(runtime, "problem.submitted")
        histories: dict[str, list[Event]] = {}
        retried_from: dict[str, dict[str, Any]] = {}
        jobs, retrying = await _plan(runtime, load, name, digest, samples, submitted, histories,
                                     retry=not args.no_retry_failed, retried_from=retried_from)
        if not args.no_probe and any(job.run_id not in submitted for job in jobs):
            await _probe(settings, args.workflow)
        # said once the probe has passed: a refused endpoint starts no runs, new or retried
        _say_if_settings_differ(submitted, name, digest)
        if retrying:
            print(retrying, file=sys.stderr)
        fresh = [job.run_id for job in jobs if job.run_id not in histories]
        # With outside workers, say so if none takes the first run (a dead `apollo up`, workers at zero).
        hint = asyncio.create_task(warn_if_no_worker(runtime, fresh[0], f"NATS at {engine_url}")) \
            if engine_running and fresh else None
        open_runs: set[str] = set()
        try:
            async with local_workers(runtime, enabled=not engine_running):
                await _run_all(runtime, jobs, args, run_config, samples, name, digest, histories=histories,
                               trackers=trackers, open_runs=open_runs)
        except asyncio.CancelledError:  # Ctrl-C: the runs submitted are not stopped by that
            if open_runs:
                say_left_unfinished("run", sorted(open_runs), engine_running=engine_running)
            raise
        finally:
            if hint is not None:
                hint.cancel()
        for job in jobs:
            if job.run_id not in histories:
                histories[job.run_id] = [r.event for r in await runtime.log.read_run(job.run_id)]
        header = header_lines(settings, args.workflow, digest)
        return _report(args, out, digest, samples, [(job.run_id, histories[job.run_id]) for job in jobs], trackers,
                       header, policy_fields(settings), retried_from=retried_from)
    finally:
        trackers.close()
        await runtime.close()


def with_sampling_flags(settings: Settings, args: argparse.Namespace) -> Settings:
    """``--temperature``, ``--top-p``, ``--top-k``, ``--max-tokens`` replace the policy model's settings."""
    given = {key: getattr(args, flag) for flag, key in SAMPLING_FLAGS.items() if getattr(args, flag, None) is not None}
    if not given:
        return settings
    raw = msgspec.to_builtins(settings)
    raw["models"]["policy"] = {**msgspec.to_builtins(settings.model_for("policy")), **given}
    return validate(raw)


def runs_in_flight(args: argparse.Namespace, settings: Settings) -> int:
    """``--concurrency``, else evolve's ``problem_max_workers`` (reference problems at once), else 16."""
    if args.concurrency:
        return int(args.concurrency)
    if args.workflow == "evolve" and settings.evolve.problem_max_workers > 0:
        return settings.evolve.problem_max_workers
    return 16


def samples_per_problem(args: argparse.Namespace, settings: Settings) -> int:
    """``--samples``, else ``dataset.samples`` (env.rollout.n), else evolve's ``test_times``, else 1."""
    if args.samples:
        return args.samples
    if settings.dataset.samples:
        return settings.dataset.samples
    return settings.evolve.test_times if args.workflow == "evolve" else 1


def dataset_path(args: argparse.Namespace, settings: Settings) -> tuple[str, str]:
    """The dataset file and where it was named: ``--dataset``, ``dataset.path`` or the reference's keys."""
    if args.dataset:
        return args.dataset, "--dataset"
    dataset = settings.dataset
    if dataset.path:
        return dataset.path, "dataset.path"
    parts = {"run.data_root": dataset.data_root, "run.dataset_name": dataset.dataset_name,
             "run.file_name": dataset.file_name}
    if not any(parts.values()):
        msg = "no dataset: give --dataset FILE (or dataset.path, or run.data_root/dataset_name/file_name in --config)"
        raise EngineError(msg)
    missing = [key for key, value in parts.items() if not value]
    if missing:
        msg = f"the config names part of a dataset path: {', '.join(missing)} missing (or give --dataset FILE)"
        raise EngineError(msg)
    # Joined as the reference's os.path.join does, relative to the working directory.
    return str(Path(*(str(value) for value in parts.values()))), "run.data_root/dataset_name/file_name"


def _load(args: argparse.Namespace, settings: Settings) -> DatasetLoad:
    path, origin = dataset_path(args, settings)
    try:
        load = load_problems(path, limit=args.limit)
    except DatasetError as exc:
        raise EngineError(str(exc) if origin == "--dataset" else f"{exc} (from {origin})") from exc
    for rejected in load.rejected[:5]:
        print(f"apollo run: skipped row {rejected.line}: {rejected.reason}", file=sys.stderr)
    if len(load.rejected) > 5:
        print(f"apollo run: ... {len(load.rejected) - 5} more rows skipped", file=sys.stderr)
    return load


def _say_if_settings_differ(submitted: set[str], name: str, digest: str) -> None:
    others = other_digests(submitted, name, digest)
    if others and not any(run_id.startswith(f"{name}-{digest}-") for run_id in submitted):
        earlier = ", ".join(sorted(others)[:3])
        print(f"apollo run: settings differ from the earlier run of this dataset: new runs "
              f"(settings digest {digest}; earlier: {earlier})", file=sys.stderr)
    else:
        print(f"apollo run: settings digest {digest}", file=sys.stderr)


async def _plan(
    runtime: Runtime, load: DatasetLoad, name: str, digest: str, samples: int, submitted: set[str],
    histories: dict[str, list[Event]], *, retry: bool, retried_from: dict[str, dict[str, Any]],
) -> tuple[list[_Job], str | None]:
    """One job per (problem, sample): its latest attempt, or a new one replacing a failed run; and
    the line saying which failed runs are retried, if any.

    Finished attempts have their events read into ``histories``; each new attempt's run id is noted
    in ``retried_from`` with the results row of the failed run it retries.
    """
    finished = await _ended_run_ids(runtime)
    jobs: list[_Job] = []
    retried: Counter[str] = Counter()
    changed: list[tuple[_Job, ProblemSubmitted]] = []
    for problem in load.problems:
        for sample in range(samples):
            ids = _attempt_ids(name, problem.problem_id, sample, digest)
            attempt = 0
            while ids(attempt + 1) in submitted:
                attempt += 1
            job = _Job(problem, sample, attempt, ids(attempt))
            events = [r.event for r in await runtime.log.read_run(job.run_id)] if job.run_id in finished else None
            if job.run_id in submitted:  # resumed: the row must still be what that run was asked
                recorded = _submission(events) if events is not None else _submission(
                    [r.event for r in await runtime.log.read_run(job.run_id)])
                if recorded is not None and (recorded.question, recorded.ground_truth) != (
                        problem.question, problem.ground_truth):
                    changed.append((job, recorded))
            if events is not None:
                result = sample_result(events)
                if retry and result is not None and could_not_complete(result):
                    retried[result.done_reason] += 1
                    retried_from[ids(attempt + 1)] = result_row(job.run_id, events)
                    job = _Job(problem, sample, attempt + 1, ids(attempt + 1))
                else:
                    histories[job.run_id] = events
            jobs.append(job)
    if changed:
        raise EngineError(_changed_words(load, changed))
    if not retried:
        return jobs, None
    reasons = ", ".join(f"{reason} {count}" for reason, count in retried.most_common())
    return jobs, (f"apollo run: retrying {sum(retried.values())} run(s) that could not be completed ({reasons}); "
                  "--no-retry-failed keeps them")


def _submission(events: list[Event]) -> ProblemSubmitted | None:
    """The submission among a run's events."""
    return next((event for event in events if isinstance(event, ProblemSubmitted)), None)


def _changed_words(load: DatasetLoad, changed: list[tuple[_Job, ProblemSubmitted]]) -> str:
    """One line: rows of the file that are no longer what the runs under their ids were asked."""
    job, recorded = changed[0]
    what = "question" if recorded.question != job.problem.question else "ground truth"
    was = recorded.question if what == "question" else str(recorded.ground_truth)
    was = " ".join(was.split())
    more = f" (and {len(changed) - 1} more run(s))" if len(changed) > 1 else ""
    return (f"problem {job.problem.problem_id} of {load.name} is not what its recorded run {job.run_id} was asked"
            f"{more}: that run's {what} was {was[:60]!r}{'…' if len(was) > 60 else ''}; the dataset changed since, "
            f"and resuming would report those runs for these rows; nothing was submitted: give the changed file "
            f"another name (run ids start with it)")


def _attempt_ids(name: str, problem_id: str, sample: int, digest: str) -> Callable[[int], str]:
    return lambda attempt: run_id_for(name, problem_id, sample, settings=digest, attempt=attempt)


async def _probe(settings: Settings, workflow: str) -> None:
    """Check each model endpoint the runs will call, once, before submitting anything."""
    # deferred: the probe pulls in openai, which `apollo --help` never needs
    from engine.models.probe import ProbeFailed, probe_endpoint

    for spec in _endpoints(settings, workflow):
        try:
            await probe_endpoint(spec.base_url, spec.model, spec.api_key)
        except ProbeFailed as exc:
            msg = f"{exc}; no runs were started (--no-probe skips this check)"
            raise EngineError(msg) from exc


def _endpoints(settings: Settings, workflow: str) -> list[Any]:
    """Distinct (endpoint, model) pairs the workflow calls."""
    roles = ["policy"]
    if settings.episode.rag_rewrite_query:
        roles.append("rag_rewriter")
    if settings.episode.rag_summarize:
        roles.append("rag_summarizer")
    specs = [settings.model_for(role) for role in roles]
    if workflow == "evolve":
        specs += [settings.model_for(role) for role in ("verifier", "summarizer", "aggregator")]
        specs += [spec for b in settings.branches for spec in (b.policy, b.verifier) if spec is not None]
        if settings.evolve.default_verifier is not None:
            specs.append(settings.evolve.default_verifier)
    unique = {(spec.base_url, spec.model): spec for spec in specs}
    return list(unique.values())


async def _run_all(
    runtime: Runtime, jobs: list[_Job], args: argparse.Namespace, run_config: dict[str, Any], samples: int,
    name: str, digest: str, *, histories: dict[str, list[Event]], trackers: Trackers, open_runs: set[str],
) -> None:
    """Submit with at most ``concurrency`` runs open; finished runs are never redone.

    Runs in ``histories`` are finished; each run that finishes here has its events added.
    ``open_runs`` holds the runs submitted and not yet ended (what an interruption leaves).
    """
    queue = [job for job in jobs if job.run_id not in histories]
    progress = Progress(len(jobs), [sample_result(histories[job.run_id]) for job in jobs
                                    if job.run_id in histories])
    while queue or open_runs:
        while queue and len(open_runs) < args.concurrency:
            job = queue.pop(0)
            if not await runtime.log.read_run(job.run_id, upto_seq=None):
                await submit(runtime.log, submission(
                    job.run_id, job.problem.question, ground_truth=job.problem.ground_truth,
                    problem_id=job.problem.problem_id, data_source=job.problem.data_source,
                    workflow=args.workflow, config=run_config,
                    group_id=group_id_for(name, job.problem.problem_id, settings=digest),
                    sample_index=job.sample, group_size=samples,
                    metadata={**grader_metadata(job.problem), "dataset": name, "settings_digest": digest,
                              "attempt": job.attempt},
                ))
            open_runs.add(job.run_id)
        await asyncio.sleep(0.2)
        stop_if_interrupted()
        finished = await _ended_run_ids(runtime)
        newly = open_runs & finished
        open_runs -= newly
        progress.waiting_on(open_runs)
        results = []
        for run_id in newly:
            events = [r.event for r in await runtime.log.read_run(run_id)]
            if any(isinstance(event, RUN_ENDINGS) for event in events):
                histories[run_id] = events  # else a lagging replica: the report reads it again at the end
            results.append(sample_result(events))
        progress.advance(results)
        if results:
            trackers.log(progress.finished, progress.metrics())
    progress.close()


def _report(
    args: argparse.Namespace, out: Path, digest: str, samples: int, histories: list[tuple[str, list[Event]]],
    trackers: Trackers, header: list[str], policy: dict[str, Any], *, retried_from: dict[str, dict[str, Any]],
) -> int:
    """Write the results file, print the tables; exit status 1 when a sample could not be completed.

    A failure reason is not marked as one a retry cannot fix when a run that failed so was retried
    here and its retry completed (``retried_from``: each retry's run id -> the failed run's row).
    """
    rows = [result_row(run_id, events) for run_id, events in histories]
    results = [result for _, events in histories if (result := sample_result(events)) is not None]
    replaced = write_results(out, rows)
    if replaced:
        print(f"apollo run: {replaced}", file=sys.stderr)
    report = compute_metrics(results, k=samples)
    stats = sampling_stats(results, k=samples) if results else None
    evolved = _evolve_report(dict(histories), out) if args.workflow == "evolve" else None
    incomplete = [r for r in results if could_not_complete(r)] + [None] * (len(histories) - len(results))
    passed = [retried_from[row["run_id"]] for row in rows
              if row["run_id"] in retried_from and row.get("completed") is True]
    reasons = failure_reasons(rows, passed_on_retry=passed)
    trackers.log(len(histories), flat_numbers({"final": to_jsonable(report), "evolve": {
        key: (evolved or {}).get(key) for key in ("accuracy_by_round", "accuracy_by_branch")}}))
    if args.json:
        payload = {**to_jsonable(report), "sampling": stats_jsonable(stats) if stats else None,
                   "settings_digest": digest, "policy": policy, "incomplete": len(incomplete),
                   "failures": [msgspec.to_builtins(reason) for reason in reasons], "results": str(out)}
        print(json.dumps({**payload, "evolve": evolved} if evolved else payload))
    else:
        print("\n".join([*header, "", render_table(report)]))
        if stats is not None:
            print(f"\n{render_stats(stats)}")
        if evolved:
            print(f"\n{render(evolved)}\nrounds: {out.with_name(out.stem + '-rounds.jsonl')}"
                  f"\nbranches: {out.with_name(out.stem + '-branches.jsonl')}")
        print(f"\nresults: {out}  ({len(rows)} run{'' if len(rows) == 1 else 's'}, settings digest {digest})")
    if incomplete:
        for line in render_reasons(reasons, len(histories)):
            print(f"apollo run: {line}" if not line.startswith(" ") else line, file=sys.stderr)
        return 1
    return 0


def _evolve_report(histories: dict[str, Any], out: Path) -> dict[str, Any]:
    """Per-round correctness, verifier confusion matrices, success per data source and per-branch
    results (rounds and branches JSONL too)."""
    rows = [row for run_id, events in histories.items() for row in round_rows(run_id, events)]
    out.with_name(out.stem + "-rounds.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    metrics = evolve_metrics(histories)
    branches = out.with_name(out.stem + "-branches.jsonl")  # each branch's result per run, the chosen one marked
    branches.write_text("".join(json.dumps(row) + "\n" for row in metrics["branches"]))
    return metrics


async def _ended_run_ids(runtime: Runtime) -> set[str]:
    """Runs that completed, failed or were cancelled (``apollo cancel``): none of them goes on."""
    return (await _run_ids_with(runtime, "run.completed") | await _run_ids_with(runtime, "run.failed")
            | await _run_ids_with(runtime, "run.cancelled"))


async def _run_ids_with(runtime: Runtime, tag: str) -> set[str]:
    """Run ids that have an event of this tag (from the stream's subject index, no reads)."""
    info = await runtime.log.js.stream_info(runtime.log.stream, subjects_filter=f"{RUN_PREFIX}.*.{tag}")
    return {subject.split(".")[2] for subject in (info.state.subjects or {})}
