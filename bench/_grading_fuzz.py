"""The ``--fuzz`` half of ``bench/grading.py``: mutants of every gold, graded in worker processes.

The mutants come from :mod:`engine.testing.grading_adversary` (the operators the fuzz test
uses); each is graded by the ``math`` grader in a process pool (one worker per core by
default; a grade runs in its worker's main thread, as in a grading worker).
"""

from __future__ import annotations

import logging
import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from engine.testing.grading_adversary import (
    CHANGING,
    OPERATORS,
    Mutant,
    Operator,
    grade_mutant,
    load_golds,
    operators,
    sample_mutants,
)

CHUNK = 32
"""Mutants per task sent to a worker: large enough to hide the pickling, small enough to balance."""


@dataclass
class OperatorTally:
    """One operator's mutants and the ones graded wrong (a 1 for changing, a 0 for preserving)."""

    operator: Operator
    mutants: int = 0
    wrong: list[tuple[Mutant, str]] = field(default_factory=list)
    """(mutant, grade detail) for each wrong grade."""


@dataclass
class FuzzResult:
    tallies: list[OperatorTally]
    golds: int
    wall_s: float


def run_fuzz(per_operator: int, seed: int, jobs: int) -> FuzzResult:
    """Grade up to ``per_operator`` mutants of every operator with ``jobs`` worker processes."""
    golds = load_golds()
    tallies = [OperatorTally(op) for op in operators()]
    mutants = [m for tally in tallies for m in sample_mutants(tally.operator, golds, per_operator, seed)]
    items = [(m.operator.name, m.text, m.gold.text) for m in mutants]
    started = time.perf_counter()
    with ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("fork"), initializer=_quiet) as pool:
        grades = list(pool.map(_grade, items, chunksize=CHUNK))
    wall = time.perf_counter() - started
    by_name = {tally.operator.name: tally for tally in tallies}
    for mutant, (score, detail) in zip(mutants, grades, strict=True):
        tally = by_name[mutant.operator.name]
        tally.mutants += 1
        if score != (0.0 if mutant.operator.kind == CHANGING else 1.0):
            tally.wrong.append((mutant, detail))
    return FuzzResult(tallies, len(golds), wall)


def report_fuzz(result: FuzzResult, per_operator: int, seed: int, jobs: int, examples: int) -> None:
    """Print the per-operator table, the totals, and up to ``examples`` wrong grades per operator."""
    changing = [t for t in result.tallies if t.operator.kind == CHANGING]
    preserving = [t for t in result.tallies if t.operator.kind != CHANGING]
    print(f"fuzz: {len(changing)} changing and {len(preserving)} preserving operators on {result.golds} golds, "
          f"up to {per_operator} mutants each, seed {seed}")
    print(f"   {'operator':32s} {'kind':10s} {'target':6s} {'mutants':>7s} {'false pos':>9s} {'false neg':>9s}")
    for tally in changing + preserving:
        positives = len(tally.wrong) if tally.operator.kind == CHANGING else "-"
        negatives = "-" if tally.operator.kind == CHANGING else len(tally.wrong)
        print(f"   {tally.operator.name:32s} {tally.operator.kind:10s} {tally.operator.target:6s} "
              f"{tally.mutants:7d} {positives!s:>9s} {negatives!s:>9s}")
    for kind, group, label in (("changing", changing, "false positives"), ("preserving", preserving,
                                                                           "false negatives")):
        count, wrong = sum(t.mutants for t in group), sum(len(t.wrong) for t in group)
        print(f"{kind:10s} mutants {count:,}, {label} {wrong:,} ({wrong / max(count, 1):.2%})")
    total = sum(t.mutants for t in result.tallies)
    print(f"graded {total:,} mutants in {result.wall_s:.1f} s with {jobs} worker(s): "
          f"{total / max(result.wall_s, 1e-9):,.0f} per second")
    for tally in changing + preserving:
        label = "false positive" if tally.operator.kind == CHANGING else "false negative"
        for mutant, detail in tally.wrong[:examples]:
            print(f"   {tally.operator.name} {label}: {mutant.gold.text!r} -> {mutant.text!r} ({detail})")


def _grade(item: tuple[str, str, str]) -> tuple[float, str]:
    name, text, gold = item
    try:
        grade = grade_mutant(OPERATORS[name], text, gold)
    except Exception as exc:  # noqa: BLE001 - counted as a 0, as a grading worker would report it
        return 0.0, f"raised {type(exc).__name__}: {exc}"
    return grade.score, grade.detail


def _quiet() -> None:
    logging.getLogger("math_verify").setLevel(logging.ERROR)
