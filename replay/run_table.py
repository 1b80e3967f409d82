"""The rows of `apollo runs`: one summary per recorded run, filters, and the table.

Pure functions over a run's recorded events; the engine reads the log and prints.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

import msgspec

from events.episode import AnswerGraded, EpisodeEnded
from events.record import Recorded
from events.run import ProblemSubmitted, RunCancelled, RunCompleted, RunFailed, RunStarted

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


def run_row(run_id: str, records: Sequence[Recorded], unreadable: int = 0) -> RunRow:
    """Summarise one run's readable events."""
    submitted = next((r.event for r in records if isinstance(r.event, ProblemSubmitted)), None)
    started = next((r.event for r in records if isinstance(r.event, RunStarted)), None)
    status, score, answer, steps, ended_at = ("running" if records else "unreadable"), None, None, None, None
    reason = None
    for record in records:
        event = record.event
        if isinstance(event, AnswerGraded) and event.episode == "main":
            score, answer = event.score, event.answer
        elif isinstance(event, EpisodeEnded) and event.episode == "main":
            steps = event.steps
        elif isinstance(event, RunCompleted) and ended_at is None:  # the first ending is the run's
            status, ended_at = "completed", event.occurred_at
            score = event.score if event.score is not None else score
            answer = event.answer if event.answer is not None else answer
        elif isinstance(event, RunFailed) and ended_at is None:
            status, ended_at, reason = "failed", event.occurred_at, event.reason
        elif isinstance(event, RunCancelled) and ended_at is None:
            status, ended_at = "cancelled", event.occurred_at
            reason = f"{event.reason} (by {event.by})" if event.by else event.reason
    first_at = _submitted_at(records)
    workflow = started.workflow if started else (submitted.workflow if submitted else "?")
    return RunRow(
        run_id=run_id, started=first_at.isoformat() if first_at else None, workflow=workflow,
        model=_policy_model(started, submitted), dataset=_dataset(submitted),
        data_source=submitted.data_source if submitted else "?", status=status, score=score, answer=answer,
        duration_s=(ended_at - first_at).total_seconds() if ended_at and first_at else None,
        steps=steps, events=len(records), question=" ".join(submitted.question.split()) if submitted else "",
        unreadable=unreadable, parent_run_id=submitted.parent_run_id if submitted else None, reason=reason,
    )


def _submitted_at(records: Sequence[Recorded]) -> datetime | None:
    """When the run itself began: its first event, or for a fork its first event of its own.

    A fork's copied prefix keeps the parent's times, and forks made before their submission
    carried their own time copy the parent's submission time too: the first event after the
    copied prefix (or a submission newer than it) is when the fork began.
    """
    if not records:
        return None
    root = records[0].event
    fork = root.metadata.get("fork") if isinstance(root, ProblemSubmitted) else None
    if not isinstance(fork, dict):
        return root.occurred_at
    last = fork.get("last_copied_id")
    copied = next((n for n, r in enumerate(records) if r.event.event_id == last), 0)
    copied_times = [r.event.occurred_at for r in records[1 : copied + 1]]
    if not copied_times or root.occurred_at > max(copied_times):
        return root.occurred_at  # made after everything it copied: its own time
    own = [r.event.occurred_at for r in records[copied + 1 :]]
    return min(own) if own else root.occurred_at


def _policy_model(started: RunStarted | None, submitted: ProblemSubmitted | None) -> str:
    for settings in (started.settings if started else {}, submitted.config if submitted else {}):
        model = settings.get("models", {}).get("policy", {}).get("model") if isinstance(settings, dict) else None
        if isinstance(model, str) and model:
            return model
    return "?"


def _dataset(submitted: ProblemSubmitted | None) -> str:
    """The dataset file's name for `apollo run` runs, else the problem's data source."""
    if submitted is None:
        return "?"
    name = submitted.metadata.get("dataset")
    if isinstance(name, str) and name:
        suffix = f"_{submitted.workflow}"  # `apollo run` names its runs <dataset>_<workflow>
        return name.removesuffix(suffix) if name.endswith(suffix) else name
    return submitted.data_source


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
