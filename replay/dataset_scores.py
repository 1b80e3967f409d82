"""Dataset-run metrics (accuracy, avg@k, pass@k, tool success) from per-sample results.

Pure functions over :class:`SampleResult` values: the caller gathers them (from run
projections, a replay, an export) and this module only counts. A sample is *correct*
when it finished with a score above zero, the reference's rule ("summed reward > 0").

Protocol (the reference's ``main_generation``): every problem is sampled K times;
``avg@k`` is the mean correctness over the first k samples of each problem, averaged
over problems, and ``pass@k`` is the fraction of problems with at least one correct
sample among its first k. "First" means lowest ``sample_index``. Samples that could
not be completed (unfinished, or ended by a model-server or engine failure) count as
incorrect there (they did not solve their problem) but are left out of ``accuracy``
and ``mean_steps``, which describe completed samples; the table counts them in their
own ``failed`` column, apart from ``wrong`` answers. With no completed sample there is
no figure at all (None, printed ``n/a``): a run whose every call failed measured nothing.

``estimator="unbiased"`` replaces the first-k pass@k by the estimator of Chen et al.
(2021, "Evaluating Large Language Models Trained on Code"): with n samples of which c
are correct, ``pass@k = 1 - C(n-c, k) / C(n, k)``, using *all* n samples of a problem.
It has lower variance than looking at one particular k-subset; a problem with fewer
than k samples falls back to "any correct among the samples it has".
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import Any, Final, Literal

import msgspec

Estimator = Literal["first_k", "unbiased"]

OVERALL: Final = "all"
"""Row label of the totals in :func:`render_table`."""

NO_DATA: Final = "n/a"
"""Printed for a figure with no sample behind it."""

INCOMPLETE_REASONS: Final = frozenset({"model_failed", "failed"})
"""Done reasons of samples that could not be completed (the model server or the engine failed),
as opposed to a model's own wrong answer."""


class SampleResult(msgspec.Struct, frozen=True, kw_only=True):
    """The outcome of one sampled run of one problem."""

    problem_id: str
    data_source: str
    sample_index: int
    score: float | None
    """Grade of the final answer; None when ungraded (e.g. the run did not finish)."""
    done_reason: str
    steps: int
    tool_calls: int
    tool_successes: int
    finished: bool


class SourceMetrics(msgspec.Struct, frozen=True, kw_only=True):
    """Metrics of one data source (or of all of them); ratios are in [0, 1] or None."""

    problems: int
    samples: int
    finished: int
    """Samples completed (``could_not_complete`` is false): graded as correct or wrong."""
    wrong: int = 0
    """Samples that were completed and graded as not correct (an ungraded one is not wrong)."""
    failed: int = 0
    """Samples that could not be completed (:func:`could_not_complete`)."""
    accuracy: float | None
    """Mean score over completed, graded samples."""
    avg_at_k: float | None
    """None when no completed sample was graded (as is ``pass_at_k``)."""
    pass_at_k: float | None
    short_problems: int
    """Problems with fewer than k samples (their avg/pass use the samples they have)."""
    tool_calls: int
    tool_successes: int
    tool_success_rate: float | None
    mean_steps: float | None
    """Mean steps over completed samples."""
    done_reasons: dict[str, int]
    """Count of samples per done reason; ``unfinished`` for unfinished samples without one."""


class MetricsReport(msgspec.Struct, frozen=True, kw_only=True):
    """Overall and per-source metrics of a dataset run."""

    k: int
    estimator: Estimator
    overall: SourceMetrics
    by_source: dict[str, SourceMetrics]
    """Keyed by data source, sorted by name."""


def compute_metrics(
    samples: Iterable[SampleResult], *, k: int | None = None, estimator: Estimator = "first_k"
) -> MetricsReport:
    """Summarise sample results overall and per data source.

    Args:
        samples: one result per (data source, problem, sample index).
        k: samples per problem for avg@k / pass@k; defaults to the most samples any
            problem has (the run's K).
        estimator: ``first_k`` (the reference's protocol) or ``unbiased`` (Chen et al.).

    Raises:
        ValueError: k < 1, an unknown estimator, a duplicate sample, or a sample with
            negative counts or more tool successes than calls.
    """
    items = list(samples)
    for sample in items:
        _validate(sample)
    if k is not None and k < 1:
        msg = f"k must be >= 1, got {k}"
        raise ValueError(msg)
    if estimator not in ("first_k", "unbiased"):
        msg = f"unknown pass@k estimator {estimator!r}: use 'first_k' or 'unbiased'"
        raise ValueError(msg)
    groups = _grouped(items)
    k = k if k is not None else max((len(g) for g in groups.values()), default=0)
    by_source: dict[str, SourceMetrics] = {}
    for source in sorted({s.data_source for s in items}):
        subset = {key: group for key, group in groups.items() if key[0] == source}
        by_source[source] = _summary(subset, k, estimator)
    return MetricsReport(
        k=k, estimator=estimator, overall=_summary(groups, k, estimator), by_source=by_source
    )


def pass_at_k_unbiased(n: int, c: int, k: int) -> float:
    """Chen et al.'s unbiased pass@k for one problem with ``c`` of ``n`` samples correct.

    ``1 - C(n-c, k) / C(n, k)``, computed as a product to stay exact-ish for large n.
    When ``n < k`` the estimator is undefined; the result is then 1.0 if any sample is
    correct, else 0.0.
    """
    if n < 0 or c < 0 or c > n or k < 1:
        msg = f"need 0 <= c <= n and k >= 1, got n={n}, c={c}, k={k}"
        raise ValueError(msg)
    if n - c < k:
        return 1.0 if c > 0 else 0.0
    return 1.0 - math.prod(1.0 - k / i for i in range(n - c + 1, n + 1))


def is_correct(sample: SampleResult) -> bool:
    """Finished and graded above zero (NaN or infinite scores count as ungraded)."""
    score = sample.score
    return sample.finished and score is not None and math.isfinite(score) and score > 0


def could_not_complete(sample: SampleResult) -> bool:
    """Unfinished, or ended by a model-server or engine failure rather than by the model's answer."""
    return not sample.finished or sample.done_reason in INCOMPLETE_REASONS


def to_jsonable(report: MetricsReport) -> dict[str, Any]:
    """Plain dicts, lists and numbers (for ``--json`` output and files)."""
    return msgspec.to_builtins(report)


def render_table(report: MetricsReport) -> str:
    """A fixed-width text table: one row per data source, a totals row, done reasons."""
    k = report.k or "k"
    headers = ["source", "problems", "samples", "finished", "wrong", "failed", "accuracy"]
    headers += [f"avg@{k}", f"pass@{k}", "tool ok", "tool calls", "mean steps"]
    rows = [_row(name, m) for name, m in report.by_source.items()]
    if len(rows) != 1:
        rows.append(_row(OVERALL, report.overall))
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = [_aligned(headers, widths), "  ".join("-" * w for w in widths)]
    lines += [_aligned(r, widths) for r in rows]
    if report.estimator == "unbiased":
        lines.append(f"pass@{k}: unbiased estimator (Chen et al. 2021) over all samples")
    lines += _missing_notes(report, k)
    if report.overall.short_problems:
        short = report.overall.short_problems
        lines.append(f"note: {short} problem(s) have fewer than {k} samples")
    lines += ["", "done reasons"]
    named = list(report.by_source.items())
    if len(named) != 1:
        named.append((OVERALL, report.overall))
    label_width = max((len(name) for name, _ in named), default=0)
    for name, m in named:
        reasons = ", ".join(f"{r} {n}" for r, n in m.done_reasons.items()) or "-"
        lines.append(f"  {name.ljust(label_width)}  {reasons}")
    return "\n".join(lines)


_Key = tuple[str, str]


def _validate(sample: SampleResult) -> None:
    counts = (sample.sample_index, sample.steps, sample.tool_calls, sample.tool_successes)
    if min(counts) < 0:
        msg = f"negative count in sample {sample.sample_index} of {sample.problem_id!r}"
        raise ValueError(msg)
    if sample.tool_successes > sample.tool_calls:
        msg = (
            f"sample {sample.sample_index} of {sample.problem_id!r} has more tool successes "
            f"({sample.tool_successes}) than calls ({sample.tool_calls})"
        )
        raise ValueError(msg)


def _grouped(items: list[SampleResult]) -> dict[_Key, list[SampleResult]]:
    """Samples per (data source, problem), sorted by sample index; duplicates rejected."""
    groups: dict[_Key, list[SampleResult]] = defaultdict(list)
    seen: set[tuple[str, str, int]] = set()
    for sample in items:
        ident = (sample.data_source, sample.problem_id, sample.sample_index)
        if ident in seen:
            msg = f"duplicate sample {ident[2]} of {ident[1]!r} in {ident[0]!r}"
            raise ValueError(msg)
        seen.add(ident)
        groups[ident[:2]].append(sample)
    for group in groups.values():
        group.sort(key=lambda s: s.sample_index)
    return dict(groups)


def _summary(groups: dict[_Key, list[SampleResult]], k: int, estimator: Estimator) -> SourceMetrics:
    samples = [s for group in groups.values() for s in group]
    completed = [s for s in samples if not could_not_complete(s)]
    graded = [s.score for s in completed if s.score is not None and math.isfinite(s.score)]
    calls = sum(s.tool_calls for s in samples)
    successes = sum(s.tool_successes for s in samples)
    measured = bool(k and graded)  # failures, or answers with no ground truth, alone would read as scoring 0
    return SourceMetrics(
        problems=len(groups),
        samples=len(samples),
        finished=len(completed),
        wrong=sum(1 for s in completed if s.score is not None and not is_correct(s)),
        failed=sum(1 for s in samples if could_not_complete(s)),
        accuracy=_mean(graded),
        avg_at_k=_mean([_mean_correct(g[:k]) for g in groups.values()]) if measured else None,
        pass_at_k=_mean([_pass(g, k, estimator) for g in groups.values()]) if measured else None,
        short_problems=sum(1 for g in groups.values() if len(g) < k),
        tool_calls=calls,
        tool_successes=successes,
        tool_success_rate=successes / calls if calls else None,
        mean_steps=_mean([float(s.steps) for s in completed]),
        done_reasons=_done_reasons(samples),
    )


def _pass(group: list[SampleResult], k: int, estimator: Estimator) -> float:
    if estimator == "unbiased":
        return pass_at_k_unbiased(len(group), sum(map(is_correct, group)), k)
    return 1.0 if any(map(is_correct, group[:k])) else 0.0


def _mean_correct(group: Sequence[SampleResult]) -> float:
    return sum(map(is_correct, group)) / len(group)


def _done_reasons(samples: list[SampleResult]) -> dict[str, int]:
    counts = Counter(s.done_reason or ("unknown" if s.finished else "unfinished") for s in samples)
    return dict(sorted(counts.items(), key=lambda item: (-item[1], item[0])))


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _row(name: str, m: SourceMetrics) -> list[str]:
    tool = _pct(m.tool_success_rate)
    steps = NO_DATA if m.mean_steps is None else f"{m.mean_steps:.2f}"
    return [
        name, str(m.problems), str(m.samples), str(m.finished), str(m.wrong), str(m.failed), _pct(m.accuracy),
        _pct(m.avg_at_k), _pct(m.pass_at_k), tool, f"{m.tool_successes}/{m.tool_calls}", steps,
    ]  # fmt: skip


def _missing_notes(report: MetricsReport, k: int | str) -> list[str]:
    """What the figures leave out: failed samples, and sources (or all) with nothing completed."""
    overall = report.overall
    if not overall.failed:
        return []
    if not overall.finished:
        return [f"note: no sample was completed ({overall.failed} could not be: the model server or the engine "
                f"failed), so there is no accuracy, avg@{k} or pass@{k} (n/a)"]
    lines = [f"note: {overall.failed} sample(s) could not be completed (model server or engine failure); "
             f"avg@{k} and pass@{k} count them as wrong"]
    empty = [name for name, m in report.by_source.items() if not m.finished]
    if empty:
        lines.append(f"note: no sample of {', '.join(empty)} was completed: n/a there")
    return lines


def _pct(value: float | None) -> str:
    return NO_DATA if value is None else f"{100 * value:.2f}%"


def _aligned(cells: list[str], widths: list[int]) -> str:
    first = cells[0].ljust(widths[0])
    rest = [cell.rjust(width) for cell, width in zip(cells[1:], widths[1:], strict=True)]
    return "  ".join([first, *rest]).rstrip()
