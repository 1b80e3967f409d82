"""Benchmark apollo's math grader against math-verify alone on the labelled cases.

Usage: .venv/bin/python bench/grading.py [--repeat N] [--quick] [--show-disagreements]
       [--fuzz N [--seed S] [--jobs J] [--examples K]] [--right-replies]

Both graders score every case of ``tests/grading/cases/*.jsonl`` in this process's main
thread (as a grading worker does). Printed per grader: agreement with the labels,
false positives (a 1 where the label is 0), false negatives, pairs per second per core
(CPU time, ``time.process_time``) and p99 latency (wall time per pair); then the speed
ratio apollo / math-verify from the same run, and the same ratio without the pairs that
either grader spent over a second on (math-verify's 5 s timeouts dominate the first).
``--quick`` grades every tenth case once.

``--fuzz N`` first grades up to N mutants per operator of the grading adversary
(:mod:`engine.testing.grading_adversary`: meaning-changing and meaning-preserving
mutations of every gold in shared/data and the labelled cases) in ``--jobs`` worker
processes, and prints per operator its kind, mutants, false positives (a changing mutant
graded 1) and false negatives (a preserving mutant graded 0), the totals, and up to
``--examples`` wrong grades per operator; then the labelled cases as above.

``--right-replies`` first grades 2,664 right replies written as models end their solutions
(:mod:`bench._right_replies`) with both graders, and prints each one's false negatives per style.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._common import percentile
from engine.console.argtypes import whole_number
from handlers.grading import grade_answer

CASES = Path(__file__).resolve().parents[1] / "tests" / "grading" / "cases"
BASELINE, CANDIDATE = "math_verify", "math"
QUICK_STRIDE = 10
SLOW_S = 1.0


@dataclass
class Tally:
    """One grader's results over the cases."""

    agree: int = 0
    false_positives: list[dict] = field(default_factory=list)
    false_negatives: list[dict] = field(default_factory=list)
    cpu_s: float = 0.0
    latencies_s: list[float] = field(default_factory=list)
    case_cpu_s: list[float] = field(default_factory=list)
    """CPU seconds per case, summed over the passes."""


def load_cases(folder: Path = CASES) -> list[dict]:
    """Every labelled case, file by file in name order."""
    rows = []
    for path in sorted(folder.glob("*.jsonl")):
        rows += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return rows


def run(mode: str, cases: list[dict], repeat: int) -> Tally:
    """Grade ``cases`` ``repeat`` times with ``mode``; verdicts come from the first pass."""
    tally = Tally()
    for case in cases:
        _score(mode, case)  # imports and caches outside the clock
    tally.case_cpu_s = [0.0] * len(cases)
    for rep in range(repeat):
        for index, case in enumerate(cases):
            cpu, wall = time.process_time(), time.perf_counter()
            score = _score(mode, case)
            tally.latencies_s.append(time.perf_counter() - wall)
            tally.case_cpu_s[index] += time.process_time() - cpu
            tally.cpu_s += time.process_time() - cpu
            if rep:
                continue
            if score == case["label"]:
                tally.agree += 1
            elif score:
                tally.false_positives.append(case)
            else:
                tally.false_negatives.append(case)
    return tally


def _score(mode: str, case: dict) -> float:
    """The grade's score; a grader that raises scores 0 (math-verify alone can, on huge numbers)."""
    try:
        return grade_answer(case["answer"], case["gold"], mode).score
    except Exception:  # noqa: BLE001 - counted as a 0, as a grading worker would report it
        return 0.0


def report(mode: str, tally: Tally, cases: int, repeat: int) -> float:
    """Print one grader's row; return its pairs per CPU second."""
    rate = cases * repeat / tally.cpu_s if tally.cpu_s else float("inf")
    print(
        f"{mode:12s} agreement {tally.agree / cases:.2%} ({tally.agree}/{cases}), "
        f"false positives {len(tally.false_positives)}, false negatives {len(tally.false_negatives)}, "
        f"{rate:,.0f} pairs/s per core, p99 {percentile(tally.latencies_s, 99) * 1000:.1f} ms"
    )
    return rate


def show(mode: str, tally: Tally) -> None:
    for kind, rows in (("false positive", tally.false_positives), ("false negative", tally.false_negatives)):
        for case in rows:
            print(f"   {mode} {kind}: {case['answer']!r} vs {case['gold']!r} ({case['source']})")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=whole_number(1, 100), default=3, help="timed passes over the cases")
    parser.add_argument("--quick", action="store_true", help=f"every {QUICK_STRIDE}th case, one pass")
    parser.add_argument("--show-disagreements", action="store_true")
    parser.add_argument("--fuzz", type=whole_number(1, 100_000), metavar="N", help="mutants per adversary operator")
    parser.add_argument("--seed", type=whole_number(0, 2**31), default=0, help="the fuzz sample's seed")
    parser.add_argument("--jobs", type=whole_number(1, 256), default=os.cpu_count() or 1, help="fuzz workers")
    parser.add_argument("--examples", type=whole_number(0, 100_000), default=3, help="wrong grades shown per operator")
    parser.add_argument("--right-replies", action="store_true", help="recall on right replies in models' styles")
    args = parser.parse_args()
    logging.getLogger("math_verify").setLevel(logging.ERROR)  # its timeouts are counted, not printed

    if args.fuzz:
        from bench._grading_fuzz import report_fuzz, run_fuzz

        report_fuzz(run_fuzz(args.fuzz, args.seed, args.jobs), args.fuzz, args.seed, args.jobs, args.examples)
        print()
    if args.right_replies:
        from bench._right_replies import report as report_right_replies

        report_right_replies()
        print()

    cases = load_cases()
    repeat = args.repeat
    if args.quick:
        cases, repeat = cases[::QUICK_STRIDE], 1
    print(f"{len(cases)} labelled cases from {CASES.relative_to(CASES.parents[2])}, {repeat} timed pass(es)")
    rates, tallies = {}, {}
    for mode in (BASELINE, CANDIDATE):
        tallies[mode] = run(mode, cases, repeat)
        rates[mode] = report(mode, tallies[mode], len(cases), repeat)
        if args.show_disagreements:
            show(mode, tallies[mode])
    print(f"speed {CANDIDATE} / {BASELINE}: {rates[CANDIDATE] / rates[BASELINE]:.2f}x (pairs per CPU second)")
    typical = [i for i in range(len(cases)) if all(t.case_cpu_s[i] < SLOW_S * repeat for t in tallies.values())]
    if len(typical) < len(cases):
        cpu = {mode: sum(tallies[mode].case_cpu_s[i] for i in typical) for mode in tallies}
        print(f"speed {CANDIDATE} / {BASELINE} without the {len(cases) - len(typical)} pairs either grader spent "
              f"over {SLOW_S:g} s on: {cpu[BASELINE] / cpu[CANDIDATE]:.2f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
