"""Metrics of evolve runs, computed from their recorded events (ground truth only here).

Per problem and round: correctness of the round's answer. Verifier accuracy: a
confusion matrix of verdicts (and of single verifier judgments) against that
correctness. Success per data source: final answers and rounds graded correct. Per
branch: each branch's own final answer and whether the run's rule chose it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from events.base import Event
from events.evolve import RoundCompleted, VerifierReported
from events.run import ProblemSubmitted, RunCompleted, RunStarted
from handlers.evolve.branches import branch_results, render_branches
from handlers.evolve.plan import plan_of
from handlers.evolve.progress import final_round


def round_rows(run_id: str, events: Sequence[Event]) -> list[dict[str, Any]]:
    """One row per completed round of a run (the JSONL a dataset run writes)."""
    problem = next((e for e in events if isinstance(e, ProblemSubmitted)), None)
    votes: dict[tuple[str | None, int], list[int]] = defaultdict(list)
    for event in events:
        if isinstance(event, VerifierReported):
            votes[(event.branch, event.round)].append(event.judgment)
    return [
        {
            "run_id": run_id,
            "problem_id": problem.problem_id if problem else None,
            "data_source": problem.data_source if problem else None,
            "branch": event.branch,
            "round": event.round,
            "answer": event.answer,
            "correct": event.correct,
            "verdict": event.majority,
            "approvals": event.approvals,
            "verifiers": event.verifiers,
            "judgments": votes[(event.branch, event.round)],
            "done_reason": event.done_reason,
        }
        for event in events
        if isinstance(event, RoundCompleted)
    ]


def branch_rows(run_id: str, events: Sequence[Event]) -> list[dict[str, Any]]:
    """One row per branch of a run: its last round's answer, verdict and grade, and whether
    the run's final-answer rule chose it (the reference's per-branch results)."""
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    plan = plan_of(started.settings if started else {})
    rounds = [e for e in events if isinstance(e, RoundCompleted)]
    chosen = final_round(rounds, plan.final_answer, plan.branches)
    problem = next((e for e in events if isinstance(e, ProblemSubmitted)), None)
    return [
        {
            "run_id": run_id,
            "problem_id": problem.problem_id if problem else None,
            "branch": result.branch,
            "rounds": result.rounds,
            "answer": result.answer,
            "verdict": result.verdict,
            "correct": result.correct,
            "success_rate": result.success_rate,
            "chosen": chosen is not None and chosen.branch == result.branch,
        }
        for result in branch_results(rounds, plan.branches)
    ]


def branch_summary(events: Sequence[Event]) -> list[str]:
    """Lines for the end of a multi-model run's timeline (none for other runs)."""
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    plan = plan_of(started.settings if started else {})
    rounds = [e for e in events if isinstance(e, RoundCompleted)]
    results = branch_results(rounds, plan.branches)
    if all(result.branch is None for result in results):
        return []
    chosen = final_round(rounds, plan.final_answer, plan.branches)
    return ["", *render_branches(results, chosen.branch if chosen else None)]


def confusion(pairs: Iterable[tuple[int | None, float | None]]) -> dict[str, int]:
    """Counts of (judged correct?, graded correct?) over pairs that have both."""
    counts = {"true_accept": 0, "false_accept": 0, "false_reject": 0, "true_reject": 0}
    for judged, graded in pairs:
        if judged is None or graded is None:
            continue
        right = graded >= 1.0
        key = ("true_" if bool(judged) == right else "false_") + ("accept" if judged else "reject")
        counts[key] += 1
    return counts


def evolve_metrics(histories: Mapping[str, Sequence[Event]]) -> dict[str, Any]:
    """All evolve metrics of a dataset run."""
    rows = [row for run_id, events in histories.items() for row in round_rows(run_id, events)]
    by_round: dict[int, list[float]] = defaultdict(list)
    by_branch: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row["correct"] is not None:
            by_round[row["round"]].append(row["correct"])
            by_branch[str(row["branch"])].append(row["correct"])
    single = [(j, row["correct"]) for row in rows for j in row["judgments"]]
    branches = [row for run_id, events in histories.items() for row in branch_rows(run_id, events)]
    return {
        "rounds": len(rows),
        "accuracy_by_round": {r: _mean(v) for r, v in sorted(by_round.items())},
        "accuracy_by_branch": {b: _mean(v) for b, v in sorted(by_branch.items())},
        "verdicts": confusion((row["verdict"], row["correct"]) for row in rows),
        "verifier_judgments": confusion(single),
        "by_data_source": _by_source(histories, rows),
        "branches": branches,
        "final_by_branch": _final_by_branch(branches),
    }


def _final_by_branch(rows: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Per branch: how often its own final answer was right, and how often it was chosen."""
    out: dict[str, dict[str, Any]] = {}
    for branch in dict.fromkeys(str(row["branch"]) for row in rows):
        mine = [row for row in rows if str(row["branch"]) == branch]
        graded = [row["correct"] for row in mine if row["correct"] is not None]
        out[branch] = {
            "final_success": _mean(graded),
            "runs": len(mine),
            "chosen": sum(1 for row in mine if row["chosen"]),
        }
    return out


def _by_source(
    histories: Mapping[str, Sequence[Event]], rows: list[dict[str, Any]]
) -> dict[str, Any]:
    finals: dict[str, list[float]] = defaultdict(list)
    for events in histories.values():
        problem = next((e for e in events if isinstance(e, ProblemSubmitted)), None)
        done = next((e for e in events if isinstance(e, RunCompleted)), None)
        if problem is not None and done is not None and done.score is not None:
            finals[problem.data_source].append(done.score)
    rounds: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        if row["correct"] is not None:
            rounds[str(row["data_source"])].append(row["correct"])
    sources = sorted(set(finals) | set(rounds))
    return {
        source: {
            "final_success": _mean(finals[source]),
            "runs": len(finals[source]),
            "round_success": _mean(rounds[source]),
            "rounds": len(rounds[source]),
        }
        for source in sources
    }


def render(metrics: Mapping[str, Any]) -> str:
    """The metrics as a few plain-text lines for the terminal."""
    lines = [f"evolve: {metrics['rounds']} rounds"]
    lines.append(
        "accuracy by round: "
        + ", ".join(f"r{r}={_pct(v)}" for r, v in metrics["accuracy_by_round"].items())
        or "-"
    )
    if len(metrics["accuracy_by_branch"]) > 1:
        lines.append(
            "accuracy by branch: "
            + ", ".join(f"{b}={_pct(v)}" for b, v in metrics["accuracy_by_branch"].items())
        )
    for name in ("verdicts", "verifier_judgments"):
        m = metrics[name]
        lines.append(
            f"{name.replace('_', ' ')} vs ground truth: accept right {m['true_accept']}, accept wrong "
            f"{m['false_accept']}, reject right {m['false_reject']}, reject wrong {m['true_reject']}"
        )
    finals = metrics.get("final_by_branch") or {}
    if len(finals) > 1:
        for branch, f in finals.items():
            lines.append(
                f"branch {branch}: its final answer right in {_pct(f['final_success'])} of "
                f"{f['runs']} runs, chosen as the run's answer {f['chosen']} times"
            )
    for source, s in metrics["by_data_source"].items():
        lines.append(
            f"{source}: final {_pct(s['final_success'])} of {s['runs']} runs, "
            f"rounds {_pct(s['round_success'])} of {s['rounds']}"
        )
    return "\n".join(lines)


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{100 * value:.1f}%"
