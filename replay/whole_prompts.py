"""A run's records with every model request's prompt whole, for readers that show prompts."""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from events.record import Recorded
from handlers.projections.prompts import with_whole_prompts


def whole_prompt_records(records: Sequence[Recorded]) -> list[Recorded]:
    """``records`` (one run's, in order) with each request recorded as a delta given whole too."""
    events = [record.event for record in records]
    resolved = with_whole_prompts(events)
    if resolved is events:
        return list(records)
    return [record if event is record.event else msgspec.structs.replace(record, event=event)
            for record, event in zip(records, resolved, strict=True)]
