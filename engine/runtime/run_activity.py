"""What `apollo up` logs about the work it does: one line per run started and finished, and
each model endpoint the first time it is configured or named by a run.

It listens on the run-lifecycle subjects with a plain NATS subscription (every append is
also an ordinary message), so it reads nothing back from the stream and costs the workers
nothing. A message it cannot decode is named and skipped.

A plain subscription also sees the appends the stream drops as duplicates (an event published
again under its id: a fork's frontier decided again by the forking command and by a worker),
so only a run's first start and first ending are logged, as the first ending is the run's. The
rounds of an evolve run are counted as they pass, so a run none of whose rounds judged the
model is logged as failed, as `apollo runs` lists it (when its start was seen here: earlier
rounds are not known).
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import structlog

from events.codec import decode
from events.evolve import RoundCompleted
from events.run import RunCancelled, RunCompleted, RunFailed, RunStarted
from events.subjects import RUN_PREFIX
from handlers.run_settings import ModelSpec, recorded_run_settings
from replay.dataset_scores import INCOMPLETE_REASONS
from replay.run_ending import done_reason_read, round_incomplete

log = structlog.get_logger("apollo.up")

SUBJECTS = tuple(f"{RUN_PREFIX}.*.{tag}"
                 for tag in ("run.started", "round.completed", "run.completed", "run.failed", "run.cancelled"))
REMEMBERED_RUNS = 100_000
"""Start times (and ended runs) kept; the oldest are forgotten first."""


class RunActivity:
    """Turns lifecycle events into log lines; :meth:`subscribe` wires it to a connection."""

    def __init__(self) -> None:
        self.started: OrderedDict[str, float] = OrderedDict()
        self.rounds: dict[str, dict[str, bool]] = {}
        """Run started here -> its rounds ended (event id -> whether it ended without the model judged)."""
        self.ended: OrderedDict[str, None] = OrderedDict()
        self.endpoints: set[tuple[str, str, str]] = set()

    def endpoints_in(self, models: Mapping[str, ModelSpec], *, source: str) -> None:
        """Log each (role, model, endpoint) not logged before."""
        for role, spec in sorted(models.items()):
            model = spec.model or "?"
            url = "-" if model.startswith("scripted:") else spec.base_url or "-"  # canned replies
            key = (role, model, url)
            if key not in self.endpoints:
                self.endpoints.add(key)
                log.info("model_endpoint", role=key[0], model=key[1], url=key[2], source=source)

    def seen(self, data: bytes, subject: str) -> None:
        try:
            event = decode(data)
        except Exception as exc:  # noqa: BLE001 - a bad message is named, never fatal here
            log.warning("run_event_unreadable", subject=subject, error=str(exc)[:200])
            return
        if isinstance(event, RunStarted):
            if event.run_id in self.started or event.run_id in self.ended:
                return  # the same start again (dropped by the stream as a duplicate)
            self._remember(event.run_id)
            run = recorded_run_settings(event.settings)  # None: unreadable, named as unknown
            log.info("run_started", run_id=event.run_id, workflow=event.workflow,
                     model=(run.model_for("policy").model if run is not None else "") or "?")
            if run is not None:
                self.endpoints_in(run.models, source=f"run {event.run_id}")
        elif isinstance(event, RoundCompleted):
            if event.run_id in self.started:
                self.rounds.setdefault(event.run_id, {})[event.event_id] = round_incomplete(event.done_reason)
        elif isinstance(event, RunCompleted | RunFailed | RunCancelled):
            if event.run_id in self.ended:
                return  # the run's ending was logged: this one is a duplicate, or not the run's
            self._ended(event.run_id)
            began = self.started.pop(event.run_id, None)
            rounds = self.rounds.pop(event.run_id, {})
            took = None if began is None else round(time.monotonic() - began, 3)
            done_reason = done_reason_read(event, len(rounds), sum(rounds.values())) \
                if isinstance(event, RunCompleted) else ""
            if isinstance(event, RunCompleted) and done_reason in INCOMPLETE_REASONS:
                # its model server (or the engine) failed: no verdict on the model, as `apollo runs` lists it
                log.info("run_finished", run_id=event.run_id, status="failed",
                         reason=f"not completed ({done_reason})", seconds=took)
            elif isinstance(event, RunCompleted):
                answer = {} if event.answer is None else {"answer": event.answer}  # no Python None as an answer
                log.info("run_finished", run_id=event.run_id, status="completed", done_reason=event.done_reason,
                         score=event.score, **answer, seconds=took)
            elif isinstance(event, RunCancelled):
                log.info("run_finished", run_id=event.run_id, status="cancelled", reason=event.reason, by=event.by,
                         seconds=took)
            else:
                log.info("run_finished", run_id=event.run_id, status="failed", reason=event.reason, seconds=took)

    def _remember(self, run_id: str) -> None:
        self.started[run_id] = time.monotonic()
        while len(self.started) > REMEMBERED_RUNS:
            forgotten, _ = self.started.popitem(last=False)
            self.rounds.pop(forgotten, None)

    def _ended(self, run_id: str) -> None:
        self.ended[run_id] = None
        while len(self.ended) > REMEMBERED_RUNS:
            self.ended.popitem(last=False)

    async def subscribe(self, nc: Any, subjects: Iterable[str] = SUBJECTS) -> list[Any]:
        """Subscribe on ``nc``; returns the subscriptions (unsubscribe them to stop)."""

        async def handle(message: Any) -> None:
            self.seen(message.data, message.subject)

        return [await nc.subscribe(subject, cb=handle) for subject in subjects]
