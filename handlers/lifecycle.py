"""Run lifecycle: a submission becomes a started run with its settings recorded; a
cancelled run takes no further decisions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from events.base import Event
from events.run import ProblemSubmitted, RunCancelled, RunFailed, RunStarted
from handlers.context import HandlerContext
from handlers.workflows import WORKFLOW_NAMES


async def start_run(event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
    """Record the settings this run will use (engine defaults + the submission's overrides).

    This is an effector: it reads the engine's live configuration, so replay reads its
    recorded output instead of re-deciding it.
    """
    if any(isinstance(e, RunStarted) for e in ctx.history):
        return []
    if event.workflow not in WORKFLOW_NAMES:
        return [ctx.new(RunFailed, "result", reason=f"unknown workflow {event.workflow!r}; "
                        f"known: {', '.join(WORKFLOW_NAMES)}")]
    resolve = ctx.services.settings_for_run
    try:
        settings: dict[str, Any] = resolve(event.config)
    except ValueError as exc:
        return [ctx.new(RunFailed, "result", reason=f"invalid config overrides: {exc}")]
    return [ctx.new(RunStarted, "result", workflow=event.workflow, settings=settings, prompts="delta")]


def run_cancelled(events: Iterable[Event]) -> bool:
    """Whether ``events`` hold a cancellation.

    Workers run no decider on an event whose history up to itself holds one, and replay
    verification skips the same events, so a cancelled run still verifies. Effectors
    also stop at a cancellation recorded after their event (no model call is worth it).
    """
    return any(isinstance(event, RunCancelled) for event in events)
