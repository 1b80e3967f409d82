"""Recording a stored message no reader can use: an ``event.rejected`` on its subject's run.

Workers record the messages delivered to them; the projector, which reads every message,
records those on subjects the work consumer does not deliver (docs/workers.md, "Deciding
below a delivery"). Both derive the rejection's id from the stream sequence, so the log
keeps one rejection per message whichever of them gets there first.
"""

from __future__ import annotations

from datetime import UTC, datetime

import structlog

from engine.eventlog.port import EventLog
from events.base import is_valid_run_id
from events.run import RUN_ENDINGS, EventRejected, RunFailed
from events.subjects import parse_subject
from handlers.context import derive_id

log = structlog.get_logger("apollo.rejections")


async def record_rejection(
    event_log: EventLog, *, seq: int, subject: str, reason: str, excerpt: str = "", lost: bool = False
) -> None:
    """Record why the message at ``seq`` cannot be read, on its subject's run when it names
    one; a lost engine-written body also fails the run if it is still going."""
    log.error("event_rejected", reason=reason, seq=seq, subject=subject)
    parsed = parse_subject(subject)
    if parsed is None:
        return
    run_id, tag = parsed
    if not is_valid_run_id(run_id) or tag == "event.rejected":
        return
    rejected = EventRejected(
        event_id=derive_id(f"seq-{seq}", "dispatcher", "rejected"),
        run_id=run_id,
        occurred_at=datetime.now(UTC),
        subject=subject,
        reason=reason,
        stream_seq=seq,
        excerpt=excerpt,
    )
    await event_log.append(rejected)
    if lost:
        await _fail_run_that_lost(event_log, rejected)


async def _fail_run_that_lost(event_log: EventLog, rejected: EventRejected) -> None:
    """An event the engine wrote for this run lost its body for good: a run still going
    would wait for it for ever, so it fails, saying which event it lost."""
    # From the leader: a replica behind it could miss the run's ending and fail a finished run.
    records = await event_log.read_run_from_leader(rejected.run_id, unreadable=[])
    if any(isinstance(record.event, RUN_ENDINGS) for record in records):
        return
    await event_log.append(RunFailed(
        event_id=derive_id(rejected.event_id, "dispatcher", "run-failed"),
        run_id=rejected.run_id,
        occurred_at=datetime.now(UTC),
        causation_id=rejected.event_id,
        reason=f"an event of this run is lost ({rejected.subject}): {rejected.reason}"[:500],
    ))
