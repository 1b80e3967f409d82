"""A run with no ground truth is ungraded: its recorded score 0 is no grade, so no row or figure shows it."""

from __future__ import annotations

from datetime import UTC, datetime

from events import AnswerGraded
from events.run import RunCompleted
from replay.dataset_scores import SampleResult, compute_metrics
from replay.run_summary import RunSummary, fold

AT = datetime(2026, 11, 28, tzinfo=UTC)


def test_an_ungraded_run_has_no_score_in_its_row() -> None:
    """`apollo runs` shows no score for an answer graded against no ground truth."""
    summary = RunSummary(run_id="r")
    fold(summary, 1, AnswerGraded(event_id="g", run_id="r", occurred_at=AT, step=1, answer="7", score=0.0,
                                  method="ungraded", detail="no ground truth given", episode="main"))
    fold(summary, 2, RunCompleted(event_id="c", run_id="r", occurred_at=AT, done_reason="answer", answer="7"))
    assert (summary.status, summary.score, summary.answer) == ("completed", None, "7")


def _sample(index: int, score: float | None) -> SampleResult:
    return SampleResult(problem_id="p", data_source="s", sample_index=index, score=score, done_reason="answer",
                        steps=1, tool_calls=0, tool_successes=0, finished=True)


def test_samples_with_no_grade_give_no_accuracy_and_none_is_wrong() -> None:
    """All ungraded: avg@k and pass@k are n/a (None) and no sample counts as wrong."""
    report = compute_metrics([_sample(0, None), _sample(1, None)])
    assert (report.overall.avg_at_k, report.overall.pass_at_k, report.overall.accuracy) == (None, None, None)
    assert (report.overall.finished, report.overall.wrong) == (2, 0)


def test_graded_samples_still_give_figures() -> None:
    """One graded sample is enough for the figures; the wrong one is counted."""
    report = compute_metrics([_sample(0, 0.0), _sample(1, 1.0)])
    assert report.overall.avg_at_k == 0.5 and report.overall.wrong == 1
