"""Per-branch results of an evolve run, and the reference's choice among branches.

A branch's result is its last completed round: that round's answer, its verdict, and
(a metric only) the share of the branch's rounds graded correct against the ground truth.
A run without branches has one result, branch ``None``.

The reference's K-branch runner picks the final answer from these results: among the
branches with an answer, the highest ``(last verdict, share of rounds graded correct)``,
the earlier branch in the config on a tie (spec §7, ``aggregate_branch_results``). Its
second key is the ground truth, so that choice can only be reported, never fed back;
apollo offers it as ``evolve.final_answer: reference`` for comparison with the reference.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from events.base import Event
from events.evolve import RoundCompleted
from handlers.answer_text import answer_phrase


@dataclass(frozen=True)
class BranchResult:
    """What one branch of an evolve run ended with."""

    branch: str | None
    rounds: int
    answer: str | None
    """The answer of the branch's last completed round."""
    verdict: int | None
    """The majority verdict of that round (``None``: not verified)."""
    correct: float | None
    """That answer's ground-truth grade (``None``: ungraded)."""
    success_rate: float | None
    """Share of the branch's rounds graded correct (``None``: none graded)."""
    last: RoundCompleted


def branch_results(
    history: Iterable[Event], order: Sequence[str | None] = ()
) -> list[BranchResult]:
    """One result per branch that completed a round, in ``order`` then first-seen order."""
    by_branch: dict[str | None, list[RoundCompleted]] = {}
    for event in history:
        if isinstance(event, RoundCompleted):
            by_branch.setdefault(event.branch, []).append(event)
    names = [b for b in order if b in by_branch] + [b for b in by_branch if b not in order]
    return [_result(branch, by_branch[branch]) for branch in names]


def reference_choice(results: Sequence[BranchResult]) -> BranchResult | None:
    """The reference's pick: best (last verdict, success rate) among branches with an answer."""
    candidates = [r for r in results if r.answer is not None]
    ranked = sorted(
        candidates, key=lambda r: (r.verdict or 0, r.success_rate or 0.0), reverse=True
    )  # sorted() is stable with reverse=True too: ties keep the config's branch order
    return ranked[0] if ranked else None


def render_branches(results: Sequence[BranchResult], chosen: str | None = None) -> list[str]:
    """One line per branch for the terminal."""
    lines = []
    for r in results:
        mark = " <- final answer" if chosen is not None and r.branch == chosen else ""
        rate = "-" if r.success_rate is None else f"{100 * r.success_rate:.0f}%"
        correct = "-" if r.correct is None else f"{r.correct:g}"
        verdict = "-" if r.verdict is None else str(r.verdict)
        lines.append(
            f"branch {r.branch}: {answer_phrase(r.answer)}, verdict {verdict}, correct {correct}, "
            f"rounds graded correct {rate} of {r.rounds}{mark}"
        )
    return lines


def _result(branch: str | None, rounds: list[RoundCompleted]) -> BranchResult:
    last = max(rounds, key=lambda r: r.round)
    graded = [r.correct for r in rounds if r.correct is not None]
    return BranchResult(
        branch=branch,
        rounds=len(rounds),
        answer=last.answer,
        verdict=last.majority,
        correct=last.correct,
        success_rate=sum(1 for c in graded if c >= 1.0) / len(graded) if graded else None,
        last=last,
    )
