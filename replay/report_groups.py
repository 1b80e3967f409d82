"""Results rows grouped by model and settings digest, each scored as `apollo run` scores a dataset.

`apollo report` must never pool two models (or one model under two settings) into one
accuracy, and must give the same figure `apollo run` printed for the same samples: Avg@k with
its standard error over problems and a percentile bootstrap interval, Pass@k likewise
(:mod:`replay.sampling_stats`), plus completed and failed counts (:mod:`replay.dataset_scores`).

Rows are ``replay.results.result_row`` dicts, from the log or a results file. A dataset run's
sample may have several attempts (a failed one and its retry): the latest counts. Runs with no
settings digest (``solve``, ``submit``, ``fork``) form their model's own group, each run one
more sample of its problem.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from typing import Any, Final

import msgspec

from replay.dataset_scores import OVERALL, SampleResult, compute_metrics
from replay.sampling_stats import sampling_stats

SINGLE_RUNS: Final = "single runs"
"""The digest column of runs started one by one (solve, submit, fork), which record none."""


class GroupScore(msgspec.Struct, frozen=True, kw_only=True):
    """One (model, settings digest, data source): `apollo run`'s figures for its samples."""

    model: str
    digest: str
    """The settings digest, or :data:`SINGLE_RUNS`."""
    source: str
    """A data source, or ``all`` for the group's total when it has several."""
    problems: int
    samples: int
    finished: int
    """Samples completed (graded as correct or wrong)."""
    failed: int
    k: int
    avg_at_k: float | None
    """None when no sample was completed (as are the other figures)."""
    avg_se: float | None
    avg_ci: tuple[float, float] | None
    pass_at_k: float | None
    pass_ci: tuple[float, float] | None


def group_scores(rows: Iterable[Mapping[str, Any]]) -> list[GroupScore]:
    """Every group's figures per data source (and ``all`` when it has several), groups by model then digest."""
    scores: list[GroupScore] = []
    for (model, digest), samples in sorted(_grouped(rows).items()):
        k = max(Counter((s.data_source, s.problem_id) for s in samples).values())  # the group's K, as `run` uses
        metrics = compute_metrics(samples, k=k)
        stats = sampling_stats(samples, k=k)
        named = list(metrics.by_source)
        for source in [*named, *([OVERALL] if len(named) > 1 else [])]:
            counts = metrics.overall if source == OVERALL else metrics.by_source[source]
            figures = stats.overall if source == OVERALL else stats.by_source[source]
            scores.append(GroupScore(
                model=model, digest=digest, source=source, problems=counts.problems, samples=counts.samples,
                finished=counts.finished, failed=counts.failed, k=k, avg_at_k=figures.avg_at_k,
                avg_se=figures.avg_se, avg_ci=figures.avg_ci, pass_at_k=figures.pass_at_k, pass_ci=figures.pass_ci,
            ))  # fmt: skip
    return scores


def _grouped(rows: Iterable[Mapping[str, Any]]) -> dict[tuple[str, str], list[SampleResult]]:
    latest: dict[tuple[str, str], dict[tuple[str, str, int], tuple[int, Mapping[str, Any]]]] = defaultdict(dict)
    single: dict[tuple[str, str], list[Mapping[str, Any]]] = defaultdict(list)
    for row in rows:
        if not isinstance(row.get("problem_id"), str):
            continue  # not submitted: no problem to score (counted apart by the caller)
        model = str(row.get("model") or "?")
        digest = row.get("settings_digest")
        if not isinstance(digest, str) or not digest:
            single[(model, SINGLE_RUNS)].append(row)
            continue
        sample = (str(row.get("data_source") or "?"), row["problem_id"], _int(row.get("sample")))
        attempt = _int(row.get("attempt"))
        kept = latest[(model, digest)].get(sample)
        if kept is None or attempt >= kept[0]:
            latest[(model, digest)][sample] = (attempt, row)
    groups = {key: [_sample(row, index) for (_, _, index), (_, row) in kept.items()] for key, kept in latest.items()}
    for key, runs in single.items():
        seen: dict[tuple[str, str], int] = defaultdict(int)
        samples = []
        for row in runs:
            problem = (str(row.get("data_source") or "?"), str(row["problem_id"]))
            samples.append(_sample(row, seen[problem]))
            seen[problem] += 1
        groups[key] = samples
    return groups


def _sample(row: Mapping[str, Any], index: int) -> SampleResult:
    """A results row as the metrics read it; rows of older files lacking a field get its neutral value."""
    completed = row.get("completed") is not False
    score = row.get("score")
    calls = max(0, _int(row.get("tool_calls")))
    return SampleResult(
        problem_id=str(row["problem_id"]), data_source=str(row.get("data_source") or "?"), sample_index=index,
        score=float(score) if isinstance(score, int | float) and not isinstance(score, bool) else None,
        done_reason=str(row.get("done_reason") or ("" if completed else "failed")),
        steps=max(0, _int(row.get("steps"))), tool_calls=calls,
        tool_successes=min(calls, max(0, _int(row.get("tool_successes")))),
        finished=bool(row.get("finished", completed)),
    )  # fmt: skip


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
