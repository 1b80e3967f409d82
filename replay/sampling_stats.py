"""Avg@k and pass@k with their uncertainty, per data source, from per-sample results.

What an evaluation report needs next to the accuracy table (the AlphaApollo v1 report gives
Avg@32 and Pass@32 on AIME, 30 problems each, where one problem moves a number by 3.3 points):

- ``pass@k`` for every k from 1 to the samples per problem, with the unbiased estimator of
  Chen et al. (2021): per problem ``1 - C(n-c, k) / C(n, k)`` over all its n samples;
- ``avg@k`` (mean correctness of the first k samples, averaged over problems) with its
  standard error over problems;
- a percentile bootstrap 95% confidence interval over problems for avg@k and pass@k at the
  run's k: problems are resampled with replacement, samples stay with their problem. The
  resampling is seeded (per source, from ``seed`` and the source name), so the same results
  always print the same interval.

A sample counts as correct by :func:`replay.dataset_scores.is_correct`; samples that could not be
completed count as wrong here (the table next to this one counts them apart). A source with no
completed sample has no figures (None, printed ``n/a``): its failures measured nothing.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Final

import msgspec

from replay.dataset_scores import NO_DATA, OVERALL, SampleResult, could_not_complete, is_correct, pass_at_k_unbiased

CONFIDENCE: Final = 0.95
DEFAULT_RESAMPLES: Final = 2000


class SourceStats(msgspec.Struct, frozen=True, kw_only=True):
    """Avg@k, pass@k and their uncertainty for one data source (or all of them)."""

    problems: int
    samples: int
    avg_at_k: float | None
    """None (as are the other figures) when no sample was completed."""
    avg_se: float | None
    """Standard error over problems (sample standard deviation / sqrt(problems)); None for one problem."""
    avg_ci: tuple[float, float] | None
    pass_at_k: float | None
    pass_ci: tuple[float, float] | None
    pass_curve: dict[int, float]
    """Unbiased pass@j for every j from 1 to k (empty without a completed sample)."""


class StatsReport(msgspec.Struct, frozen=True, kw_only=True):
    k: int
    confidence: float
    resamples: int
    seed: int
    overall: SourceStats
    by_source: dict[str, SourceStats]


def sampling_stats(
    samples: Iterable[SampleResult], *, k: int | None = None, resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> StatsReport:
    """Avg@k / pass@k with standard error, bootstrap interval and pass@j curve per source.

    Args:
        samples: one result per (data source, problem, sample index); duplicates are refused.
        k: samples per problem; defaults to the most any problem has.
        resamples: bootstrap resamples (at least 100).
        seed: seed of the resampling.

    Raises:
        ValueError: no samples, k < 1, too few resamples, or a duplicate sample.
    """
    items = list(samples)
    groups = _correctness_by_problem(items)
    if not groups:
        msg = "no samples to summarise"
        raise ValueError(msg)
    if resamples < 100:
        msg = f"resamples must be at least 100, got {resamples}"
        raise ValueError(msg)
    k = k if k is not None else max(len(marks) for marks in groups.values())
    if k < 1:
        msg = f"k must be >= 1, got {k}"
        raise ValueError(msg)
    measured = {s.data_source for s in items if not could_not_complete(s)}
    by_source = {
        source: _source_stats([m for (s, _), m in groups.items() if s == source], k, resamples, f"{seed}:{source}",
                              measured=source in measured)
        for source in sorted({source for source, _ in groups})
    }
    overall = _source_stats(list(groups.values()), k, resamples, f"{seed}:{OVERALL}", measured=bool(measured))
    return StatsReport(k=k, confidence=CONFIDENCE, resamples=resamples, seed=seed, overall=overall,
                       by_source=by_source)


def to_jsonable(report: StatsReport) -> dict[str, Any]:
    """Plain values for ``--json``; pass@j keys become strings."""
    return msgspec.to_builtins(report)


def render_stats(report: StatsReport) -> str:
    """Avg@k and Pass@k with their intervals, one row per source, then pass@j for every j from 1 to k."""
    k = report.k
    level = f"{100 * report.confidence:g}% CI"
    headers = ["source", "problems", "samples", f"Avg@{k}", level, "SE", f"Pass@{k}", level]
    named = list(report.by_source.items())
    if len(named) != 1:
        named.append((OVERALL, report.overall))
    rows = [[name, str(s.problems), str(s.samples), _pct(s.avg_at_k), _interval(s.avg_ci), _se(s),
             _pct(s.pass_at_k), _interval(s.pass_ci)]
            for name, s in named]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = [_aligned(headers, widths), "  ".join("-" * w for w in widths), *(_aligned(r, widths) for r in rows)]
    lines.append(f"CI: percentile bootstrap over problems, {report.resamples} resamples, seed {report.seed}; "
                 "SE in points")
    lines += ["", "pass@k (unbiased estimator, Chen et al. 2021)"]
    label_width = max(len(name) for name, _ in named)
    for name, stats in named:
        lines += _curve_lines(name.ljust(label_width), stats.pass_curve, k)
    return "\n".join(lines)


def _correctness_by_problem(samples: Iterable[SampleResult]) -> dict[tuple[str, str], list[bool]]:
    indexed: dict[tuple[str, str], dict[int, bool]] = defaultdict(dict)
    for sample in samples:
        marks = indexed[(sample.data_source, sample.problem_id)]
        if sample.sample_index in marks:
            msg = f"duplicate sample {sample.sample_index} of {sample.problem_id!r} in {sample.data_source!r}"
            raise ValueError(msg)
        marks[sample.sample_index] = is_correct(sample)
    return {key: [marks[i] for i in sorted(marks)] for key, marks in indexed.items()}


def _source_stats(problems: list[list[bool]], k: int, resamples: int, seed: str, *, measured: bool) -> SourceStats:
    if not measured:
        return SourceStats(problems=len(problems), samples=sum(map(len, problems)), avg_at_k=None, avg_se=None,
                           avg_ci=None, pass_at_k=None, pass_ci=None, pass_curve={})
    avg = [sum(marks[:k]) / len(marks[:k]) for marks in problems]
    passed = [pass_at_k_unbiased(len(marks), sum(marks), k) for marks in problems]
    curve = {j: _mean([pass_at_k_unbiased(len(m), sum(m), j) for m in problems]) for j in range(1, k + 1)}
    avg_ci, pass_ci = _bootstrap([avg, passed], resamples, random.Random(seed))
    return SourceStats(
        problems=len(problems), samples=sum(map(len, problems)), avg_at_k=_mean(avg),
        avg_se=_standard_error(avg), avg_ci=avg_ci, pass_at_k=_mean(passed), pass_ci=pass_ci,
        pass_curve=curve,
    )


def _bootstrap(
    columns: list[list[float]], resamples: int, rng: random.Random
) -> list[tuple[float, float]]:
    """Percentile intervals of each column's mean, resampling the same problems for all columns."""
    count = len(columns[0])
    means: list[list[float]] = [[] for _ in columns]
    for _ in range(resamples):
        picks = [rng.randrange(count) for _ in range(count)]
        for column, out in zip(columns, means, strict=True):
            out.append(sum(column[i] for i in picks) / count)
    tail = (1 - CONFIDENCE) / 2
    return [(_percentile(sorted(m), tail), _percentile(sorted(m), 1 - tail)) for m in means]


def _percentile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between closest ranks (numpy's default)."""
    position = q * (len(ordered) - 1)
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def _standard_error(values: list[float]) -> float | None:
    if len(values) < 2:
        return None
    mean = _mean(values)
    variance = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return math.sqrt(variance / len(values))


CURVE_PER_LINE: Final = 8
"""pass@j cells per printed line: K = 32 takes four aligned lines per source."""


def _curve_lines(label: str, curve: dict[int, float], k: int) -> list[str]:
    """Every pass@j from 1 to k, ``CURVE_PER_LINE`` to a line, columns aligned under the first line's."""
    if not curve:
        return [f"  {label}  {NO_DATA} (no completed sample)"]
    width = len(f"@{k} 100.00%")
    cells = [f"@{j} {_pct(curve[j])}".rjust(width) for j in range(1, k + 1)]
    chunks = [cells[i : i + CURVE_PER_LINE] for i in range(0, len(cells), CURVE_PER_LINE)]
    return [f"  {label if n == 0 else ' ' * len(label)}  {'  '.join(chunk)}".rstrip() for n, chunk in enumerate(chunks)]


def _mean(values: Sequence[float]) -> float:
    return sum(values) / len(values)


def _pct(value: float | None) -> str:
    return NO_DATA if value is None else f"{100 * value:.2f}%"


def _se(stats: SourceStats) -> str:
    if stats.avg_at_k is None:
        return NO_DATA
    return "-" if stats.avg_se is None else f"{100 * stats.avg_se:.2f}"


def _interval(bounds: tuple[float, float] | None) -> str:
    return NO_DATA if bounds is None else f"[{100 * bounds[0]:.2f}, {100 * bounds[1]:.2f}]"


def _aligned(cells: list[str], widths: list[int]) -> str:
    first = cells[0].ljust(widths[0])
    rest = [cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True)]
    return "  ".join([first, *rest]).rstrip()
