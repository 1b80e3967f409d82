"""Dataset-run metrics on small hand-computed cases."""

from __future__ import annotations

import itertools
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from replay.dataset_scores import (
    SampleResult,
    compute_metrics,
    is_correct,
    pass_at_k_unbiased,
    to_jsonable,
)


def _sample(
    problem: str,
    index: int,
    score: float | None,
    *,
    source: str = "aime24",
    finished: bool = True,
    done: str = "answered",
    steps: int = 2,
    calls: int = 0,
    ok: int = 0,
) -> SampleResult:
    return SampleResult(
        problem_id=problem,
        data_source=source,
        sample_index=index,
        score=score,
        done_reason=done,
        steps=steps,
        tool_calls=calls,
        tool_successes=ok,
        finished=finished,
    )


def _grid() -> list[SampleResult]:
    """A: 1,0,0,1  B: 0,0,1,0 (aime24); C: 1,1,1,1 (amc23); listed out of order."""
    marks = {"A": [1, 0, 0, 1], "B": [0, 0, 1, 0], "C": [1, 1, 1, 1]}
    samples = [
        _sample(p, i, float(m), source="amc23" if p == "C" else "aime24")
        for p, row in marks.items()
        for i, m in enumerate(row)
    ]
    return samples[::-1]


def test_avg_and_pass_at_k_over_first_k_samples() -> None:
    """avg@2 and pass@2 look only at sample indices 0 and 1 of every problem."""
    report = compute_metrics(_grid(), k=2)
    assert report.overall.avg_at_k == pytest.approx((0.5 + 0.0 + 1.0) / 3)
    assert report.overall.pass_at_k == pytest.approx(2 / 3)
    assert report.by_source["aime24"].avg_at_k == pytest.approx(0.25)
    assert report.by_source["aime24"].pass_at_k == pytest.approx(0.5)
    assert report.by_source["amc23"].pass_at_k == 1.0


def test_k_defaults_to_samples_per_problem() -> None:
    """Without k, every sample of every problem counts (the run's K)."""
    report = compute_metrics(_grid())
    assert report.k == 4
    assert report.overall.avg_at_k == pytest.approx((0.5 + 0.25 + 1.0) / 3)
    assert report.overall.pass_at_k == 1.0
    assert report.overall.accuracy == pytest.approx(7 / 12)


def test_unbiased_estimator_matches_hand_computation() -> None:
    """Chen et al.'s estimator uses all samples: A 5/6, B 1/2, C 1 at k=2."""
    report = compute_metrics(_grid(), k=2, estimator="unbiased")
    assert report.estimator == "unbiased"
    assert report.overall.pass_at_k == pytest.approx((5 / 6 + 0.5 + 1.0) / 3)
    assert report.overall.avg_at_k == pytest.approx(0.5)


@given(st.integers(min_value=1, max_value=9), st.data())
def test_unbiased_estimator_equals_subset_enumeration(n: int, data: st.DataObject) -> None:
    """The closed form equals the share of k-subsets holding a correct sample."""
    c = data.draw(st.integers(min_value=0, max_value=n))
    k = data.draw(st.integers(min_value=1, max_value=n))
    marks = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(marks, k))
    expected = sum(any(s) for s in subsets) / len(subsets)
    assert pass_at_k_unbiased(n, c, k) == pytest.approx(expected)


def test_unbiased_estimator_with_too_few_samples() -> None:
    """With fewer than k samples the estimate is any-correct, and bad arguments raise."""
    assert pass_at_k_unbiased(2, 1, 5) == 1.0
    assert pass_at_k_unbiased(2, 0, 5) == 0.0
    with pytest.raises(ValueError):
        pass_at_k_unbiased(3, 4, 1)


def test_tool_success_rate_steps_and_done_reasons() -> None:
    """Tool success is successes over calls; steps average finished samples only."""
    samples = [
        _sample("A", 0, 1.0, calls=3, ok=3, steps=4, done="answered"),
        _sample("A", 1, 0.0, calls=2, ok=0, steps=8, done="max_steps"),
        _sample("B", 0, None, finished=False, calls=5, ok=1, steps=1, done=""),
    ]
    overall = compute_metrics(samples).overall
    assert (overall.tool_calls, overall.tool_successes) == (10, 4)
    assert overall.tool_success_rate == pytest.approx(0.4)
    assert overall.mean_steps == pytest.approx(6.0)
    assert overall.done_reasons == {"answered": 1, "max_steps": 1, "unfinished": 1}


def test_unfinished_samples_count_wrong_but_not_in_accuracy() -> None:
    """Unfinished samples lower avg@k and pass@k but are excluded from accuracy."""
    samples = [
        _sample("A", 0, 1.0),
        _sample("A", 1, None, finished=False),
        _sample("B", 0, None, finished=False),
        _sample("B", 1, 1.0, finished=False),
    ]
    overall = compute_metrics(samples).overall
    assert overall.finished == 1
    assert overall.accuracy == 1.0
    assert overall.avg_at_k == pytest.approx(0.25)
    assert overall.pass_at_k == pytest.approx(0.5)


def test_fractional_and_non_finite_scores() -> None:
    """Accuracy averages scores; NaN/inf scores are ungraded and never correct."""
    samples = [_sample("A", 0, 0.5), _sample("A", 1, 0.0), _sample("B", 0, math.nan)]
    samples.append(_sample("C", 0, math.inf))
    report = compute_metrics(samples)
    assert report.overall.accuracy == pytest.approx(0.25)
    assert not is_correct(samples[2])
    assert not is_correct(samples[3])


def test_short_problems_are_counted() -> None:
    """Problems with fewer than k samples are flagged and use the samples they have."""
    samples = [_sample("A", 0, 1.0), _sample("A", 1, 1.0), _sample("B", 0, 0.0)]
    report = compute_metrics(samples, k=2)
    assert report.overall.short_problems == 1
    assert report.overall.avg_at_k == pytest.approx(0.5)


def test_same_problem_id_in_two_sources_is_two_problems() -> None:
    """Problems are keyed by data source and id, so merged datasets do not mix."""
    samples = [_sample("0", 0, 1.0, source="aime24"), _sample("0", 0, 0.0, source="amc23")]
    report = compute_metrics(samples)
    assert report.overall.problems == 2
    assert sorted(report.by_source) == ["aime24", "amc23"]


def test_empty_input_gives_empty_report() -> None:
    """No samples give zero counts and no ratios rather than an error."""
    report = compute_metrics([])
    assert report.k == 0
    assert report.by_source == {}
    assert report.overall.problems == 0
    assert report.overall.accuracy is None
    assert report.overall.avg_at_k is None
    assert report.overall.pass_at_k is None
    assert report.overall.tool_success_rate is None
    assert report.overall.mean_steps is None


@pytest.mark.parametrize(
    ("samples", "kwargs", "message"),
    [
        ([_sample("A", 0, 1.0)], {"k": 0}, "k must be"),
        ([_sample("A", 0, 1.0)], {"estimator": "magic"}, "unknown pass@k estimator"),
        ([_sample("A", 0, 1.0), _sample("A", 0, 0.0)], {}, "duplicate sample 0"),
        ([_sample("A", -1, 1.0)], {}, "negative count"),
        ([_sample("A", 0, 1.0, calls=1, ok=2)], {}, "more tool successes"),
    ],
)
def test_invalid_input_raises_value_error(
    samples: list[SampleResult], kwargs: dict[str, object], message: str
) -> None:
    """Bad arguments and inconsistent samples raise ValueError with a clear message."""
    with pytest.raises(ValueError, match=message):
        compute_metrics(samples, **kwargs)  # type: ignore[arg-type]


def test_report_is_jsonable() -> None:
    """``to_jsonable`` gives plain dicts with per-source entries."""
    data = to_jsonable(compute_metrics(_grid(), k=2))
    assert data["k"] == 2
    assert data["by_source"]["amc23"]["pass_at_k"] == 1.0
    assert data["overall"]["done_reasons"] == {"answered": 12}
