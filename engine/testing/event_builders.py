"""Small builders for events in tests and benchmarks."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from typing import Any

from events import ProblemSubmitted, RunStarted


def submitted(run_id: str = "r-1", question: str = "What is 1+1?", **fields: Any) -> ProblemSubmitted:
    return ProblemSubmitted(
        event_id=fields.pop("event_id", str(uuid.uuid4())),
        run_id=run_id,
        occurred_at=datetime.now(UTC),
        problem_id=fields.pop("problem_id", "p-1"),
        question=question,
        **fields,
    )


def started(run_id: str = "r-1", **fields: Any) -> RunStarted:
    return RunStarted(
        event_id=fields.pop("event_id", str(uuid.uuid4())),
        run_id=run_id,
        occurred_at=datetime.now(UTC),
        workflow=fields.pop("workflow", "reason"),
        **fields,
    )
