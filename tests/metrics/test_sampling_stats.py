"""Avg@k with standard error, the pass@k curve and bootstrap intervals over problems."""

from __future__ import annotations

import math

import pytest

from replay.dataset_scores import SampleResult, compute_metrics, render_table
from replay.sampling_stats import render_stats, sampling_stats, to_jsonable


def _sample(problem: str, index: int, correct: bool, *, source: str = "aime24", done: str = "answer",
            finished: bool = True) -> SampleResult:
    return SampleResult(problem_id=problem, data_source=source, sample_index=index,
                        score=1.0 if correct else 0.0, done_reason=done, steps=2, tool_calls=0,
                        tool_successes=0, finished=finished)


def _grid(marks: dict[str, list[int]], source: str = "aime24") -> list[SampleResult]:
    return [_sample(p, i, bool(m), source=source) for p, row in marks.items() for i, m in enumerate(row)]


def test_pass_curve_uses_the_unbiased_estimator_for_every_k() -> None:
    """A: 1 of 4 correct, B: 2 of 4: pass@1..4 equal the hand-computed Chen et al. values."""
    stats = sampling_stats(_grid({"A": [1, 0, 0, 0], "B": [0, 1, 1, 0]})).overall
    a = [1 - math.comb(3, k) / math.comb(4, k) for k in range(1, 5)]
    b = [1 - math.comb(2, k) / math.comb(4, k) for k in range(1, 5)]
    assert stats.pass_curve == pytest.approx({k: (a[k - 1] + b[k - 1]) / 2 for k in range(1, 5)})
    assert stats.pass_at_k == pytest.approx(1.0)


def test_avg_at_k_and_its_standard_error() -> None:
    """Per-problem means 0.25 and 0.5: avg 0.375, SE = sample sd / sqrt(2) = 0.125."""
    stats = sampling_stats(_grid({"A": [1, 0, 0, 0], "B": [0, 1, 1, 0]})).overall
    assert stats.avg_at_k == pytest.approx(0.375)
    assert stats.avg_se == pytest.approx(0.125)


def test_bootstrap_interval_is_reproducible_and_brackets_the_estimate() -> None:
    """The same samples and seed give the same interval; it contains the point estimate."""
    marks = {str(p): [int(i < p % 9) for i in range(8)] for p in range(30)}
    first, second = sampling_stats(_grid(marks)), sampling_stats(_grid(marks))
    assert first == second
    low, high = first.overall.avg_ci
    assert low <= first.overall.avg_at_k <= high
    assert low < high
    assert any(sampling_stats(_grid(marks), seed=s).overall.avg_ci != first.overall.avg_ci for s in (1, 2, 3))


def test_unanimous_problems_give_a_point_interval() -> None:
    """All correct: every resample has mean 1, so the interval is [1, 1]."""
    stats = sampling_stats(_grid({"A": [1, 1], "B": [1, 1]})).overall
    assert stats.avg_ci == (1.0, 1.0)
    assert stats.pass_ci == (1.0, 1.0)


def test_stats_are_given_per_source_and_rendered() -> None:
    """Each source gets its own row; the text names Avg@k, Pass@k, the interval and the curve."""
    samples = _grid({"A": [1, 0], "B": [0, 0]}) + _grid({"C": [1, 1]}, source="aime25")
    report = sampling_stats(samples)
    assert set(report.by_source) == {"aime24", "aime25"}
    assert report.by_source["aime25"].avg_at_k == 1.0
    text = render_stats(report)
    assert "Avg@2" in text and "Pass@2" in text and "95% CI" in text
    assert "@1 " in text and "@2 " in text
    assert to_jsonable(report)["overall"]["pass_curve"]


def test_bad_arguments_are_refused() -> None:
    """No samples, k 0, too few resamples and duplicates raise ValueError."""
    for call in (lambda: sampling_stats([]), lambda: sampling_stats(_grid({"A": [1]}), k=0),
                 lambda: sampling_stats(_grid({"A": [1]}), resamples=5),
                 lambda: sampling_stats(_grid({"A": [1]}) * 2)):
        with pytest.raises(ValueError):
            call()


def test_failed_samples_are_counted_apart_from_wrong_answers() -> None:
    """model_failed and engine failures are 'failed', not 'wrong', and stay out of accuracy."""
    samples = [
        _sample("A", 0, True), _sample("A", 1, False),
        _sample("B", 0, False, done="model_failed"), _sample("B", 1, False, done="failed", finished=False),
    ]
    overall = compute_metrics(samples).overall
    assert (overall.wrong, overall.failed) == (1, 2)
    assert overall.accuracy == 0.5
    assert overall.avg_at_k == pytest.approx(0.25)
    assert "could not be completed" in render_table(compute_metrics(samples))


def test_the_pass_curve_prints_every_k_eight_to_a_line() -> None:
    """K = 4 prints @1 @2 @3 @4; K = 32 prints all 32 points on four lines, none left to --json alone."""
    short = render_stats(sampling_stats(_grid({"A": [1, 0, 0, 1]})))
    assert [f"@{j} " in short for j in range(1, 5)] == [True] * 4
    marks = {str(p): [int(i < p % 9) for i in range(32)] for p in range(3)}
    curve = render_stats(sampling_stats(_grid(marks))).split("pass@k (unbiased estimator")[1].splitlines()[1:]
    assert len(curve) == 4 and all(line.count("@") == 8 for line in curve)
    assert curve[0].split()[1] == "@1" and curve[-1].split()[-2] == "@32"
