"""Reading the histories of chosen runs, several at a time (each read waits mostly on the server)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from engine.eventlog.port import EventLog
from events.record import Recorded, Unreadable

IN_FLIGHT = 16
"""Run reads waiting on the server at once."""


async def read_runs(event_log: EventLog, run_ids: Sequence[str], *, unreadable: list[Unreadable] | None = None,
                    tags: Sequence[str] | None = None, in_flight: int = IN_FLIGHT) -> dict[str, list[Recorded]]:
    """Each run's records (only those of the types ``tags`` when given), in the order of
    ``run_ids``; unreadable messages are added to ``unreadable`` as :meth:`EventLog.read_run` does."""
    gate = asyncio.Semaphore(in_flight)

    async def one(run_id: str) -> list[Recorded]:
        async with gate:
            if tags is not None:
                return await event_log.read_run_tags(run_id, tags, unreadable=unreadable)
            return await event_log.read_run(run_id, unreadable=unreadable)

    histories = await asyncio.gather(*(one(run_id) for run_id in run_ids))
    return dict(zip(run_ids, histories, strict=True))
