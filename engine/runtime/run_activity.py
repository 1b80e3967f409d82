"""What `apollo up` logs about the work it does: one line per run started and finished, and
each model endpoint the first time it is configured or named by a run.

It listens on the run-lifecycle subjects with a plain NATS subscription (every append is
also an ordinary message), so it reads nothing back from the stream and costs the workers
nothing. A message it cannot decode is named and skipped.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from typing import Any

import structlog

from events.codec import decode
from events.run import RunCancelled, RunCompleted, RunFailed, RunStarted
from events.subjects import RUN_PREFIX
from handlers.run_settings import ModelSpec, recorded_run_settings
from replay.dataset_scores import INCOMPLETE_REASONS

log = structlog.get_logger("apollo.up")

SUBJECTS = tuple(f"{RUN_PREFIX}.*.{tag}" for tag in ("run.started", "run.completed", "run.failed", "run.cancelled"))
REMEMBERED_RUNS = 100_000
"""Start times kept for durations; the oldest are forgotten first."""


class RunActivity:
    """Turns lifecycle events into log lines; :meth:`subscribe` wires it to a connection."""

    def __init__(self) -> None:
        self.started: OrderedDict[str, float] = OrderedDict()
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
            self._remember(event.run_id)
            run = recorded_run_settings(event.settings)  # None: unreadable, named as unknown
            log.info("run_started", run_id=event.run_id, workflow=event.workflow,
                     model=(run.model_for("policy").model if run is not None else "") or "?")
            if run is not None:
                self.endpoints_in(run.models, source=f"run {event.run_id}")
        elif isinstance(event, RunCompleted | RunFailed | RunCancelled):
            began = self.started.pop(event.run_id, None)
            took = None if began is None else round(time.monotonic() - began, 3)
            if isinstance(event, RunCompleted) and event.done_reason in INCOMPLETE_REASONS:
                # its model server (or the engine) failed: no verdict on the model, as `apollo runs` lists it
                log.info("run_finished", run_id=event.run_id, status="failed",
                         reason=f"not completed ({event.done_reason})", seconds=took)
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
            self.started.popitem(last=False)

    async def subscribe(self, nc: Any, subjects: Iterable[str] = SUBJECTS) -> list[Any]:
        """Subscribe on ``nc``; returns the subscriptions (unsubscribe them to stop)."""

        async def handle(message: Any) -> None:
            self.seen(message.data, message.subject)

        return [await nc.subscribe(subject, cb=handle) for subject in subjects]
