"""What `apollo report` plots, reduced from results rows, evolve round rows and training metrics.

Inputs are the rows the engine already writes (``replay.results.result_row``, the evolve
``round_rows``, a tracker's CSV rows or the training demo's ``metrics.jsonl`` lines), so a
report can be made from the log or from files. Accuracy is never pooled across models or
settings: :mod:`replay.report_groups` scores each (model, settings digest) as `apollo run` does.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from typing import Any

import msgspec

from replay.report_groups import GroupScore, group_scores


class RunUse(msgspec.Struct, frozen=True):
    run_id: str
    steps: int
    tool_calls: int


class RoundScore(msgspec.Struct, frozen=True):
    """Mean grade of round ``round`` on ``branch`` (``main``: a single-model run) over runs."""

    branch: str
    round: int
    mean: float
    runs: int


class ReportData(msgspec.Struct, frozen=True):
    groups: list[GroupScore]
    """Avg@k and Pass@k with their intervals per model, settings digest and data source."""
    scores: list[float]
    """The grade of every finished, graded sample."""
    runs: list[RunUse]
    rounds: list[RoundScore]
    training: dict[str, list[tuple[float, float]]]
    """Reward series of a training run: metric name -> (step, value) pairs."""
    incomplete: int
    """Samples that could not be completed (not in the accuracy)."""


def report_data(results: Iterable[Mapping[str, Any]], rounds: Iterable[Mapping[str, Any]] = (),
                training: Iterable[Mapping[str, Any]] = ()) -> ReportData:
    """Reduce the rows; rows missing a field are counted where they can be and skipped elsewhere."""
    rows = list(results)
    scores: list[float] = []
    runs: list[RunUse] = []
    incomplete = 0
    for row in rows:
        if row.get("completed") is False or row.get("status") == "not submitted":
            incomplete += 1
            continue
        score = row.get("score")
        if isinstance(score, int | float) and math.isfinite(score):
            scores.append(float(score))
        if isinstance(row.get("steps"), int):
            runs.append(RunUse(str(row.get("run_id")), row["steps"], int(row.get("tool_calls") or 0)))
    return ReportData(
        groups=group_scores(rows), scores=scores, runs=runs, rounds=_round_scores(rounds),
        training=_reward_series(training), incomplete=incomplete,
    )


def _round_scores(rounds: Iterable[Mapping[str, Any]]) -> list[RoundScore]:
    grades: dict[tuple[str, int], list[float]] = defaultdict(list)
    for row in rounds:
        correct, round_ = row.get("correct"), row.get("round")
        if isinstance(correct, int | float) and isinstance(round_, int):
            grades[(str(row.get("branch") or "main"), round_)].append(float(correct))
    return [RoundScore(branch, round_, sum(values) / len(values), len(values))
            for (branch, round_), values in sorted(grades.items())]


def _reward_series(training: Iterable[Mapping[str, Any]]) -> dict[str, list[tuple[float, float]]]:
    """Every column whose name mentions ``reward`` (or ``score``), against the ``step`` column."""
    series: dict[str, list[tuple[float, float]]] = defaultdict(list)
    for row in training:
        step = _number(row.get("step"))
        if step is None:
            continue
        for name, value in row.items():
            number = _number(value)
            if name != "step" and number is not None and ("reward" in name or "score" in name):
                series[name].append((step, number))
    return {name: sorted(points) for name, points in sorted(series.items())}


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None
