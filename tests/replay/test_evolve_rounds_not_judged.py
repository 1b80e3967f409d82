"""An evolve run whose every round ended without the model's answer judged reads as not completed.

Its deciders record ``run.completed`` (``evolved``, score 0) all the same, and the run's row, its
results row and its sample result used to read that as a completed run graded wrong.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from events.base import Event
from events.evolve import RoundCompleted
from events.run import ProblemSubmitted, RunCompleted
from replay.results import result_row, sample_result
from replay.run_summary import RunSummary, fold

AT = datetime(2026, 11, 28, tzinfo=UTC)


def _run(round_reasons: list[str]) -> list[Event]:
    events: list[Event] = [ProblemSubmitted(event_id="r", run_id="r", occurred_at=AT, problem_id="p", question="q",
                                            ground_truth="5", workflow="evolve")]
    events += [RoundCompleted(event_id=f"k{i}", run_id="r", occurred_at=AT, round=i, done_reason=reason,
                              correct=0.0 if reason == "answer" else None)
               for i, reason in enumerate(round_reasons)]
    events.append(RunCompleted(event_id="end", run_id="r", occurred_at=AT, done_reason="evolved", score=0.0))
    return events


def _summary(events: list[Event]) -> RunSummary:
    summary = RunSummary(run_id="r")
    for seq, event in enumerate(events, 1):
        fold(summary, seq, event)
    return summary


@pytest.mark.parametrize("reasons", [["model_failed"] * 3, ["failed", "model_failed"]])
def test_every_round_unjudged_reads_failed_with_no_score(reasons: list[str]) -> None:
    """The row is failed with no score; the results row and sample say model_failed, not wrong."""
    events = _run(reasons)
    summary = _summary(events)
    assert (summary.status, summary.score) == ("failed", None)
    assert summary.reason is not None and summary.reason.startswith("not completed (model_failed)")
    sample = sample_result(events)
    assert sample is not None and (sample.done_reason, sample.score) == ("model_failed", None)
    row = result_row("r", events)
    assert (row["completed"], row["score"], row["correct"]) == (False, None, False)


def test_one_judged_round_keeps_the_run_completed() -> None:
    """A run with one round that judged the model is completed, with its recorded score."""
    events = _run(["model_failed", "answer", "model_failed"])
    summary = _summary(events)
    assert (summary.status, summary.score) == ("completed", 0.0)
    sample = sample_result(events)
    assert sample is not None and (sample.done_reason, sample.score) == ("evolved", 0.0)
