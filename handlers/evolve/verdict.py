"""Deciders that turn verifier reports into a verdict, a memory entry and the round's end.

VerifierReported (the N-th of the round, in stream order) -> VerdictReached, then the
    aggregation call (several majority reports) or MemoryWritten + TrajectorySealed
    (policy, each verifier) + RoundCompleted
ModelResponded / ModelCallFailed(aggregator) -> MemoryWritten + TrajectorySealed... + RoundCompleted

Tie rule (``evolve.tie``), for an even split of 1s and 0s:
``reject`` (default) gives 0, ``accept`` gives 1, ``first`` takes verifier 0's verdict
(what the reference's ``Counter.most_common`` does).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from events.base import Event
from events.evolve import (
    MemoryEntry,
    MemoryWritten,
    RoundCompleted,
    VerdictReached,
    VerifierReported,
)
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from handlers.context import HandlerContext
from handlers.episode.model_choice import sampling_params
from handlers.episode.prompts import render_aggregation_prompt
from handlers.evolve.plan import Plan, episode_id, parse_episode, plan_of_run
from handlers.evolve.sealing import seal_round
from handlers.evolve.verification import brief_of, judgment_of
from handlers.evolve.view import RoundView, round_view

TIE_RULES = ("reject", "accept", "first")
NO_REPORT = "No verifier produced a valid report."
_REPORT = re.compile(r"<report>(.*?)</report>", re.IGNORECASE | re.DOTALL)


def majority(judgments: Sequence[int], tie: str = "reject") -> tuple[int, bool]:
    """The majority judgment and whether it was a tie (decided by ``tie``)."""
    approvals = sum(1 for j in judgments if j == 1)
    rejections = len(judgments) - approvals
    if approvals != rejections:
        return int(approvals > rejections), False
    if tie == "accept":
        return 1, True
    if tie == "first":
        return (judgments[0] if judgments else 0), True
    if tie == "reject":
        return 0, True
    msg = f"unknown tie rule {tie!r}: use one of {', '.join(TIE_RULES)}"
    raise ValueError(msg)


async def count_votes(event: VerifierReported, ctx: HandlerContext) -> Sequence[Event]:
    """When the round's last report arrives, the majority decides."""
    plan = plan_of_run(ctx.run_settings())
    view = round_view(ctx.history, event.branch, event.round)
    if view.verdict is not None or len(view.reports) < plan.verifiers:
        return []
    judgments = [view.reports[i].judgment for i in sorted(view.reports)]
    decided, tie = majority(judgments, plan.tie)
    verdict = ctx.new(
        VerdictReached,
        "verdict",
        round=event.round,
        judgments=judgments,
        majority=decided,
        approvals=sum(judgments),
        tie=tie,
        tie_rule=plan.tie,
        branch=event.branch,
    )
    reports = majority_reports(view, decided)
    if plan.aggregate and len(reports) > 1:
        return [verdict, _aggregation_call(ctx, view, decided, reports)]
    representative = reports[0] if reports else NO_REPORT
    history = [*ctx.history, verdict]
    return [
        verdict,
        *complete_round(ctx, history, plan, event.branch, event.round, verdict, representative),
    ]


async def merge_reports(
    event: ModelResponded | ModelCallFailed, ctx: HandlerContext
) -> Sequence[Event]:
    """The aggregator's merged report (or, failing that, the first majority report) is kept."""
    ref = parse_episode(event.branch, event.episode)
    if ref is None or ref.kind != "aggregate":
        return []
    view = round_view(ctx.history, event.branch, ref.round)
    if view.completed is not None or view.verdict is None:
        return []
    reports = majority_reports(view, view.verdict.majority)
    merged = _first_report(event.text) if isinstance(event, ModelResponded) else None
    if merged is not None and judgment_of(merged) not in (None, view.verdict.majority):
        merged = None  # a merged report must keep the majority's verdict
    representative = merged or (reports[0] if reports else NO_REPORT)
    plan = plan_of_run(ctx.run_settings())
    return complete_round(
        ctx, ctx.history, plan, event.branch, ref.round, view.verdict, representative
    )


def majority_reports(view: RoundView, decided: int) -> list[str]:
    """Valid reports that agree with the verdict, in verifier order."""
    return [
        view.reports[i].report
        for i in sorted(view.reports)
        if view.reports[i].valid
        and view.reports[i].judgment == decided
        and view.reports[i].report.strip()
    ]


def complete_round(
    ctx: HandlerContext,
    history: Sequence[Event],
    plan: Plan,
    branch: str | None,
    round_: int,
    verdict: VerdictReached | None,
    representative: str,
) -> list[Event]:
    """Write the round to memory (the vote is its score), seal the round's trajectories
    and record the round's metrics."""
    view = round_view(history, branch, round_)
    graded = view.graded
    answer = graded.answer if graded else None
    solution = view.summary if view.summary and view.summary.strip() else _solution_fallback(view)
    if verdict is not None and f"\\boxed{{{verdict.majority}}}" not in representative:
        representative = f"{representative.strip()}\n\\boxed{{{verdict.majority}}}"
    entry = MemoryEntry(
        entry_id=episode_id(branch, round_, "memory"),
        round=round_,
        branch=branch,
        solution=solution,
        feedback=representative,
        answer=answer,
        score=float(verdict.majority) if verdict else None,
        vote=verdict.approvals / len(verdict.judgments) if verdict and verdict.judgments else None,
        complexity=len(solution),
    )
    written = ctx.new(MemoryWritten, "memory", entry=entry)
    completed = ctx.new(
        RoundCompleted,
        "round-completed",
        round=round_,
        answer=answer,
        majority=verdict.majority if verdict else None,
        approvals=verdict.approvals if verdict else 0,
        verifiers=len(verdict.judgments) if verdict else 0,
        correct=_correctness(view),
        done_reason=graded.done_reason if graded else "unknown",
        branch=branch,
    )
    return [written, *seal_round(ctx, history, plan, view, verdict), completed]


def _correctness(view: RoundView) -> float | None:
    """The round's grade against the ground truth: a metric only, never fed back."""
    if view.problem is None or view.problem.ground_truth is None or view.graded is None:
        return None
    return view.graded.score


def _solution_fallback(view: RoundView) -> str:
    if view.graded is None or view.graded.answer is None:
        return "(no answer was given)"
    return f"Final answer: {view.graded.answer}"


def _aggregation_call(
    ctx: HandlerContext, view: RoundView, decided: int, reports: list[str]
) -> ModelCallRequested:
    model = ctx.run_settings().role_models(view.branch)["aggregator"]
    question = view.problem.question if view.problem else ""
    messages = render_aggregation_prompt(
        question,
        brief_of(ctx, view.branch, view.round),
        majority_judgment=decided,
        reports=reports,
        system_prompt=model.system_prompt,
    )
    return ctx.new(
        ModelCallRequested,
        "aggregate",
        call_id=ctx.new_id("aggregate"),
        role="aggregator",
        step=1,
        messages=messages,
        model=model.model,
        params=sampling_params(model),
        purpose="aggregate",
        branch=view.branch,
        episode=episode_id(view.branch, view.round, "aggregate"),
    )


def _first_report(text: str) -> str | None:
    match = _REPORT.search(text)
    body = match.group(1).strip() if match else ""
    return body or None
