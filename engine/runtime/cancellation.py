"""Ending a run from outside: `apollo cancel` appends ``run.cancelled`` to a run that has not ended.

The append expects the run's last sequence to be the one just read, so a run that ends
meanwhile is not cancelled after the fact; a run that keeps moving is cancelled anyway after
a few tries. The event id derives from the run id, so two cancels of one run record one.
"""

from __future__ import annotations

import getpass
import socket
from datetime import UTC, datetime

from engine.errors import RunMovedOn, RunNotFound
from engine.eventlog.port import EventLog
from events.base import Event
from events.record import Unreadable
from events.run import RUN_ENDINGS, RunCancelled
from handlers.context import derive_id

CONDITIONAL_TRIES = 5
"""Appends that expect the run to stand still before one that does not."""


async def cancel_run(log: EventLog, run_id: str, *, reason: str) -> tuple[RunCancelled | None, Event | None]:
    """``(the cancellation appended, None)``, or ``(None, the ending)`` for a run that had already ended.

    Raises:
        RunNotFound: nothing is recorded under ``run_id``.
    """
    event = RunCancelled(event_id=derive_id(run_id, "cancel", "cancelled"), run_id=run_id,
                         occurred_at=datetime.now(UTC), reason=reason, by=_who())
    tries = 0
    while True:
        skipped: list[Unreadable] = []
        records = await log.read_run(run_id, unreadable=skipped)
        if not records and not skipped:
            msg = f"unknown run {run_id!r}: no events recorded"
            raise RunNotFound(msg)
        ending = next((r.event for r in records if isinstance(r.event, RUN_ENDINGS)), None)
        if ending is not None:
            return None, ending
        last = max([0, *(r.seq for r in records), *(found.seq for found in skipped)])
        tries += 1
        try:
            await log.append(event, expected_run_seq=last if tries <= CONDITIONAL_TRIES else None)
        except RunMovedOn:
            continue
        return event, None


def _who() -> str:
    """``user@host`` of this process, for the record (never a secret)."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):  # no name for this uid (a bare container)
        user = "?"
    return f"{user}@{socket.gethostname()}"
