"""Sealed trajectories of an evolve round: its policy episode and each verifier episode.

A round is sealed when it completes, because only then are both of its rewards known:
the ground-truth grade (when the problem has one) and the verifiers' label-free vote.

Group ids: the policy trajectories of one problem and round form a GRPO group across
the problem's samples (``<group>/r<round>``, with the branch when there is one); the
verifiers of one round judge the same brief, so they form their own group
(``<run>/r<round>/verifiers``).
"""

from __future__ import annotations

from collections.abc import Sequence

from events.base import Event
from events.episode import AnswerGraded, TrajectorySealed
from events.evolve import VerdictReached, VerifierReported
from events.run import ProblemSubmitted
from handlers.context import HandlerContext
from handlers.episode.flow import trajectory_turns, version_fields
from handlers.evolve.plan import Plan, episode_id
from handlers.evolve.view import RoundView
from handlers.projections.episode import episode_state
from handlers.rewards import compute_reward


def seal_round(
    ctx: HandlerContext,
    history: Sequence[Event],
    plan: Plan,
    view: RoundView,
    verdict: VerdictReached | None,
) -> list[TrajectorySealed]:
    """The round's policy trajectory, then one per verifier that reported (in index order)."""
    problem = view.problem
    if problem is None or view.graded is None:
        return []
    policy = _seal_policy(ctx, history, problem, view, view.graded, verdict)
    correct = int(policy.score >= 1.0) if policy.graded else None
    verifiers = [
        _seal_verifier(ctx, history, plan, problem, view, view.reports[i], verdict, correct)
        for i in sorted(view.reports)
    ]
    return [policy, *verifiers]


def policy_group(problem: ProblemSubmitted, branch: str | None, round_: int) -> str:
    base = problem.group_id or problem.run_id
    return f"{base}/{branch}/r{round_}" if branch is not None else f"{base}/r{round_}"


def verifier_group(problem: ProblemSubmitted, branch: str | None, round_: int) -> str:
    base = problem.run_id if branch is None else f"{problem.run_id}/{branch}"
    return f"{base}/r{round_}/verifiers"


def _seal_policy(
    ctx: HandlerContext,
    history: Sequence[Event],
    problem: ProblemSubmitted,
    view: RoundView,
    graded: AnswerGraded,
    verdict: VerdictReached | None,
) -> TrajectorySealed:
    episode = episode_id(view.branch, view.round, "policy")
    state = episode_state(history, episode)
    known = problem.ground_truth is not None and graded.method != "ungraded"
    score = graded.score if known else 0.0
    reward = compute_reward(state.run, ctx.catalog, score=score, invalid_turns=state.invalid_turns,
                            steps=state.step, done_reason=graded.done_reason) if known else 0.0
    vote = verdict.approvals / len(verdict.judgments) if verdict and verdict.judgments else None
    turns = trajectory_turns(state)
    return ctx.new(
        TrajectorySealed, f"sealed-{episode}",
        problem_id=problem.problem_id, group_id=policy_group(problem, view.branch, view.round),
        sample_index=problem.sample_index, data_source=problem.data_source,
        group_size=problem.group_size, turns=turns, **version_fields(turns),
        reward=reward, score=score,
        done_reason=graded.done_reason, invalid_turns=state.invalid_turns, model=state.model,
        complete=graded.done_reason != "model_failed", role="policy", branch=view.branch,
        episode=episode, graded=known, vote=vote, round=view.round,
        grader=graded.grader, grader_version=graded.grader_version,
    )  # fmt: skip


def _policy_grader(view: RoundView) -> dict[str, str]:
    """A verifier's ground-truth score is derived from its round's policy grade: name that grader."""
    graded = view.graded
    return {"grader": graded.grader, "grader_version": graded.grader_version} if graded else {}


def _seal_verifier(
    ctx: HandlerContext,
    history: Sequence[Event],
    plan: Plan,
    problem: ProblemSubmitted,
    view: RoundView,
    report: VerifierReported,
    verdict: VerdictReached | None,
    correct: int | None,
) -> TrajectorySealed:
    """A verifier is right against the labels when its judgment matches the policy's grade,
    and right by the vote when it sided with the majority."""
    episode = episode_id(view.branch, view.round, "verifier", report.verifier)
    state = episode_state(history, episode)
    score = float(report.judgment == correct) if correct is not None else 0.0
    vote = float(report.judgment == verdict.majority) if verdict is not None else None
    turns = trajectory_turns(state)
    return ctx.new(
        TrajectorySealed, f"sealed-{episode}",
        problem_id=problem.problem_id, group_id=verifier_group(problem, view.branch, view.round),
        sample_index=report.verifier, data_source=problem.data_source, group_size=plan.verifiers,
        turns=turns, **version_fields(turns),
        reward=score, score=score, done_reason=report.reason,
        invalid_turns=state.invalid_turns, model=state.model,
        complete=report.reason != "model_failed", role="verifier", branch=view.branch,
        episode=episode, graded=correct is not None, vote=vote, round=view.round,
        verifier=report.verifier, **_policy_grader(view),
    )  # fmt: skip
