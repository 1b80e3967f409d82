"""The rows of `apollo runs`: one summary per recorded run, filters, and the table.

Pure functions over a run's recorded events; the engine reads the log and prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import msgspec

from events.record import Recorded
from replay.run_summary import RunSummary, began_at, fold, policy_model, workflow

STATUSES = ("completed", "failed", "cancelled", "running", "unreadable")
"""What `apollo runs --status` accepts."""


class RunRow(msgspec.Struct, kw_only=True):
    """One run as `apollo runs` lists it (and ``--json`` prints)."""

    run_id: str
    started: str | None
    """ISO time the run was submitted (UTC); a fork's, not its parent's."""
    workflow: str
    model: str
    dataset: str
    data_source: str
    status: str
    score: float | None
    answer: str | None
    duration_s: float | None
    """Submission to the run's ending; ``None`` while it runs."""
    steps: int | None
    events: int
    question: str
    unreadable: int
    parent_run_id: str | None = None
    reason: str | None = None
    """Why a failed or cancelled run ended (and who cancelled it)."""
    problem_id: str | None = None
    grader: str | None = None
    """The grader of the run's main answer, and its version."""
    grader_version: str | None = None
    policy_version: str | None = None
    """The policy version the main trajectory's turns came from (the oldest), when versioned."""


def run_row(run_id: str, records: Sequence[Recorded], unreadable: int = 0) -> RunRow:
    """Summarise one run's readable events."""
    summary = RunSummary(run_id=run_id, unreadable=unreadable)
    for record in records:
        fold(summary, record.seq, record.event)
    return row_of(summary)


def row_of(summary: RunSummary) -> RunRow:
    """The row of a run folded so far (:mod:`replay.run_summary`)."""
    first_at = began_at(summary)
    ended_at = summary.ended_at
    return RunRow(
        run_id=summary.run_id, started=first_at.isoformat() if first_at else None, workflow=workflow(summary),
        model=policy_model(summary), dataset=_known(summary.dataset if summary.submitted else None),
        data_source=_known(summary.data_source if summary.submitted else None),
        status=summary.status if summary.events else "unreadable", score=summary.score, answer=summary.answer,
        duration_s=(ended_at - first_at).total_seconds() if ended_at and first_at else None,
        steps=summary.steps, events=summary.events, question=summary.question, unreadable=summary.unreadable,
        parent_run_id=summary.parent_run_id, reason=summary.reason, problem_id=summary.problem_id,
        grader=summary.grader, grader_version=summary.grader_version, policy_version=summary.policy_version,
    )


def _known(text: str | None) -> str:
    return "?" if text is None else text


class RunFilter(msgspec.Struct, kw_only=True):
    """What `apollo runs` (and `apollo export`) narrow the runs to; ``None`` keeps everything."""

    dataset: str | None = None
    """Matches the dataset name or the problem's data source (case-insensitive)."""
    model: str | None = None
    """A substring of the policy model's name (case-insensitive)."""
    status: str | None = None
    workflow: str | None = None
    since: datetime | None = None
    until: datetime | None = None

    def keeps(self, row: RunRow) -> bool:
        if self.dataset and self.dataset.lower() not in (row.dataset.lower(), row.data_source.lower()):
            return False
        if self.model and self.model.lower() not in row.model.lower():
            return False
        if self.status and row.status != self.status:
            return False
        if self.workflow and row.workflow != self.workflow:
            return False
        started = datetime.fromisoformat(row.started) if row.started else None
        if self.since and (started is None or started < self.since):
            return False
        return not (self.until and (started is None or started >= self.until))


def select(rows: Iterable[RunRow], keep: RunFilter, limit: int | None = None) -> list[RunRow]:
    """The rows ``keep`` keeps, newest first (runs without a readable start last), at most ``limit``."""
    kept = [row for row in rows if keep.keeps(row)]
    kept.sort(key=lambda row: (row.started is not None, row.started or "", row.run_id), reverse=True)
    return kept if limit is None else kept[:limit]


COLUMNS = (("STARTED", 16), ("WORKFLOW", 8), ("MODEL", 24), ("DATASET", 16), ("STATUS", 10), ("SCORE", 5),
           ("TIME", 7))
"""Fixed-width columns after the run id (whose width is the longest id shown)."""


def render_table(rows: Sequence[RunRow]) -> str:
    """The table `apollo runs` prints: ids are never cut, other cells are clipped to their column."""
    id_width = max([len("RUN"), *(len(row.run_id) for row in rows)])
    header = "  ".join([f"{'RUN':<{id_width}}", *(_cell(name, width) for name, width in COLUMNS), "QUESTION"])
    lines = [header]
    for row in rows:
        cells = [_when(row.started), row.workflow, row.model, row.dataset, row.status,
                 "-" if row.score is None else f"{row.score:g}", _duration(row.duration_s)]
        lines.append("  ".join([f"{row.run_id:<{id_width}}",
                                *(_cell(text, width) for text, (_, width) in zip(cells, COLUMNS, strict=True)),
                                _clip(row.question, 50)]))
    return "\n".join(lines)


def _cell(text: str, width: int) -> str:
    return f"{_clip(text, width):<{width}}"


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def _when(started: str | None) -> str:
    """Local wall-clock minute of an ISO time."""
    return datetime.fromisoformat(started).astimezone().strftime("%Y-%m-%d %H:%M") if started else "-"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    if seconds < 60:
        return f"{seconds:.1f}s"
    minutes, secs = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def to_jsonable(rows: Sequence[RunRow]) -> list[dict[str, Any]]:
    return [msgspec.to_builtins(row) for row in rows]
