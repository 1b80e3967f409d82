"""The application's operations on runs (submit, watch, local workers), called by the CLI, the trainer and benches."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import uuid
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from engine.app.bootstrap import Runtime
from engine.errors import RunMovedOn, RunNotFound
from engine.eventlog.port import Appended, EventLog
from engine.eventlog.stored import report_unreadable
from engine.nats.transient import retrying
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.runtime.signals import stop_if_interrupted
from engine.serving.watch import watching_activations
from events.base import Event, is_valid_run_id
from events.episode import AnswerGraded, EpisodeEnded
from events.evolve import RoundCompleted
from events.model import ModelCallFailed
from events.record import Recorded, Unreadable
from events.run import RUN_ENDINGS, ProblemSubmitted, RunCancelled, RunCompleted, RunFailed
from replay.dataset_scores import INCOMPLETE_REASONS
from replay.run_ending import done_reason_read, round_incomplete


async def submit(log: EventLog, event: ProblemSubmitted) -> Appended:
    """Append a submission as its run's first event when the run is new.

    Appending it on the condition that the run has no events yet lets the worker that
    receives it start from the submission alone instead of reading the run's history.
    A run that already has events (the same submission again) gets a plain append,
    which the event id deduplicates. A failover in the middle is retried for a bounded
    time (the event id makes a retry of a stored submission a no-op).
    """
    async def once() -> Appended:
        try:
            return await log.append(event, expected_run_seq=0)
        except RunMovedOn:
            return await log.append(event)

    return await retrying(once, doing=f"submit run {event.run_id}")


def new_run_id(prefix: str = "run") -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def submission(
    run_id: str,
    question: str,
    *,
    ground_truth: str | None = None,
    problem_id: str | None = None,
    data_source: str = "cli",
    workflow: str = "reason",
    config: dict[str, Any] | None = None,
    group_id: str | None = None,
    sample_index: int = 0,
    group_size: int | None = None,
    metadata: dict[str, Any] | None = None,
) -> ProblemSubmitted:
    """A ``ProblemSubmitted`` whose event id is the run id (resubmitting is a no-op)."""
    if not is_valid_run_id(run_id):
        msg = f"invalid run id {run_id!r}: use letters, digits, '-' and '_' only"
        raise ValueError(msg)
    return ProblemSubmitted(
        event_id=run_id,
        run_id=run_id,
        occurred_at=datetime.now(UTC),
        problem_id=problem_id or run_id,
        question=question,
        ground_truth=ground_truth,
        data_source=data_source,
        workflow=workflow,
        config=config or {},
        group_id=group_id,
        sample_index=sample_index,
        group_size=group_size,
        metadata=metadata or {},
    )


async def watch_run(
    runtime: Runtime,
    run_id: str,
    on_event: Callable[[Recorded], None] | None = None,
    *,
    poll: float = 0.05,
    timeout: float | None = None,
) -> list[Recorded]:
    """Follow a run until it completes or fails; returns all its events.

    What is stored already comes in one read (a finished run is returned whole); after it
    the log's ``follow`` hands over each event as it is recorded. ``poll`` is how often the
    wait looks at an interruption and the deadline: no read is made then.
    """
    loop = asyncio.get_running_loop()
    deadline = None if timeout is None else loop.time() + timeout
    records, skipped = await retrying(lambda: _read_run(runtime, run_id), doing=f"read run {run_id}")
    last = 0
    for record in records:
        last = record.seq
        if on_event is not None:
            on_event(record)
    for found in skipped:  # reported once: following starts after it
        report_unreadable(found, None)
        last = max(last, found.seq)
    if any(isinstance(r.event, RUN_ENDINGS) for r in records):
        return records
    following = runtime.log.follow(run_id, last)
    waiting: asyncio.Future[Recorded] | None = None
    try:
        while True:
            waiting = waiting or asyncio.ensure_future(anext(following))
            done, _ = await asyncio.wait({waiting}, timeout=poll)
            if done:
                record, waiting = waiting.result(), None
                records.append(record)
                if on_event is not None:
                    on_event(record)
                if isinstance(record.event, RUN_ENDINGS):
                    return records
            if deadline is not None and loop.time() > deadline:
                msg = f"run {run_id} did not finish within {timeout:.0f}s"
                raise TimeoutError(msg)
            stop_if_interrupted()
    finally:
        if waiting is not None:  # the follow must be idle before it can be closed
            waiting.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await waiting
        await following.aclose()


async def run_events(runtime: Runtime, run_id: str, unreadable: list[Unreadable] | None = None) -> list[Recorded]:
    """The run's readable events; messages that cannot be read go to ``unreadable``."""
    skipped: list[Unreadable] = [] if unreadable is None else unreadable
    records, found = await retrying(lambda: _read_run(runtime, run_id), doing=f"read run {run_id}")
    skipped.extend(found)
    if not records:
        if skipped:
            first = skipped[0]
            msg = f"run {run_id!r} has no readable event ({len(skipped)} unreadable; seq {first.seq}: {first.reason})"
        else:
            msg = f"unknown run {run_id!r}: no events recorded"
        raise RunNotFound(msg)
    return records


async def _read_run(runtime: Runtime, run_id: str, after_seq: int = 0) -> tuple[list[Recorded], list[Unreadable]]:
    """One read of a run (a retry after a failover starts over, unreadable records included)."""
    skipped: list[Unreadable] = []
    return await runtime.log.read_run(run_id, after_seq=after_seq, unreadable=skipped), skipped


def outcome(records: list[Recorded]) -> dict[str, Any]:
    """The summary `apollo solve --json` prints.

    ``incomplete`` is true when the run ended without the model's own answer being judged
    (its model server failed, or the engine did): its score is no verdict on the model. An
    evolve run has no main episode: its answer and score are the chosen round's
    (``run.completed``), and ``rounds`` counts its completed rounds.
    """
    result: dict[str, Any] = {"run_id": records[0].event.run_id if records else None}
    for record in records:
        event = record.event
        if isinstance(event, ModelCallFailed) and (event.episode == "main"
                                                   or (event.role == "policy" and "failure" not in result)):
            result["failure"] = f"{event.role} model call failed ({event.kind}): {event.message}"
        elif isinstance(event, AnswerGraded) and event.episode == "main":
            result.update(answer=event.answer, score=event.score, method=event.method)
        elif isinstance(event, EpisodeEnded) and event.episode == "main":
            result.update(steps=event.steps, done_reason=event.done_reason, invalid_turns=event.invalid_turns)
        elif isinstance(event, RoundCompleted):
            result["rounds"] = result.get("rounds", 0) + 1
            if round_incomplete(event.done_reason):
                result["rounds_failed"] = result.get("rounds_failed", 0) + 1
        elif isinstance(event, RunCompleted):
            result["status"] = "completed"
            read = done_reason_read(event, result.get("rounds", 0), result.get("rounds_failed", 0))
            # an evolve run none of whose rounds judged the model reads as model_failed (replay.run_ending)
            result["done_reason"] = read if read != event.done_reason else result.get("done_reason", read)
            if result.get("rounds") and "score" not in result:  # an evolve run: its chosen round's
                result.update(answer=event.answer, score=event.score, method="chosen round")
        elif isinstance(event, RunFailed):
            result.update(status="failed", reason=event.reason)
        elif isinstance(event, RunCancelled):
            result.update(status="cancelled", reason=f"cancelled by {event.by or 'someone'}: {event.reason}")
    result.setdefault("status", "running")
    result["incomplete"] = result["status"] != "completed" or result.get("done_reason") in INCOMPLETE_REASONS
    return result


NO_WORKER_AFTER_S = 10.0
"""How long a submission may wait for its first worker before the user is told none is there."""


async def warn_if_no_worker(runtime: Runtime, run_id: str, where: str, *, after: float = NO_WORKER_AFTER_S) -> None:
    """After ``after`` seconds, say so once if the run is still untouched and no worker is alive.

    A dead engine with its NATS still up (an ``apollo up`` elsewhere that died, workers
    scaled to zero) would otherwise leave the command waiting with no word. Run it as a
    task next to the wait; it only reads.
    """
    await asyncio.sleep(after)
    with contextlib.suppress(Exception):  # a hint, never a reason to fail the command
        records, _ = await _read_run(runtime, run_id)
        if len(records) > 1:
            return  # a worker has taken it
        try:
            active = await runtime.log.workers_active(DispatcherSettings().consumer)
        except Exception as exc:  # noqa: BLE001 - e.g. a role not allowed to look at the work queue
            lacking = f"no worker has taken it (whether one pulls from {where} could not be checked: {exc})"
        else:
            if active:
                return
            lacking = f"no worker is pulling work from {where}"
        print(f"apollo: run {run_id} has waited {after:g} s and {lacking}: "
              "start one with `apollo up` (or `apollo worker --nats-url URL` on any host); "
              "still waiting, Ctrl-C to stop", file=sys.stderr, flush=True)


@contextlib.asynccontextmanager
async def local_workers(runtime: Runtime, enabled: bool, *, kind: type[Dispatcher] = Dispatcher):
    """Run a dispatcher (of ``kind``) in this process while the block runs (when no engine is up)."""
    if not enabled:
        yield None
        return
    dispatcher = runtime.dispatcher(kind=kind)
    async with watching_activations(runtime.log):  # model calls carry the served policy version
        task = asyncio.create_task(dispatcher.run())
        try:
            yield dispatcher
        finally:
            dispatcher.stop()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(task, 30)


def events_only(records: list[Recorded]) -> list[Event]:
    return [record.event for record in records]
