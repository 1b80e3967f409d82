"""Deciders that move a run on after a round: next round, next branch, or the run's end.

RoundCompleted -> RoundStarted(next round) | RoundStarted(round 0 of a waiting branch) | RunCompleted

Branches beyond ``branch_max_workers`` wait: the k-th branch to finish (in stream
order) starts waiting branch number ``cap + k - 1``, so concurrent completions never
start the same branch twice. The run completes when the last branch finishes.

Final answer (``evolve.final_answer``): ``best_vote`` (default) takes the round with
the highest share of approving verifiers, the latest such round on a tie; ``last``
takes the last round completed; ``reference`` takes the reference's K-branch choice
(``handlers.evolve.branches``: each branch's last round, the best by verdict and then
by its rounds' ground-truth success). Its ground-truth grade becomes the run's score.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.base import Event
from events.evolve import RoundCompleted
from events.run import RunCompleted
from handlers.context import HandlerContext
from handlers.evolve.branches import branch_results, reference_choice
from handlers.evolve.plan import Plan, plan_of_run
from handlers.evolve.rounds import start_round
from handlers.evolve.view import completed_rounds


async def advance(event: RoundCompleted, ctx: HandlerContext) -> Sequence[Event]:
    """Start what comes after this round."""
    plan = plan_of_run(ctx.run_settings())
    if event.round + 1 < plan.rounds:
        return [start_round(ctx, plan, event.branch, event.round + 1)]
    finished = [r for r in completed_rounds(ctx.history) if r.round + 1 >= plan.rounds]
    if len(finished) >= len(plan.branches):
        return [_run_completed(ctx, plan)]
    waiting = _waiting_branch(plan, len(finished))
    return [] if waiting is None else [start_round(ctx, plan, waiting, 0)]


def final_round(
    rounds: Sequence[RoundCompleted], rule: str = "best_vote", order: Sequence[str | None] = ()
) -> RoundCompleted | None:
    """The round whose answer the run reports, by the final-answer rule (branches in ``order``)."""
    if not rounds:
        return None
    if rule == "last":
        return rounds[-1]
    if rule == "reference":
        chosen = reference_choice(branch_results(rounds, order))
        return chosen.last if chosen else None
    ranked = sorted(enumerate(rounds), key=lambda item: (_share(item[1]), item[1].round, item[0]))
    return ranked[-1][1]


def _share(completed: RoundCompleted) -> float:
    return completed.approvals / completed.verifiers if completed.verifiers else 0.0


def _waiting_branch(plan: Plan, finished: int) -> str | None:
    cap = plan.branch_max_workers
    if cap <= 0:
        return None
    index = cap + finished - 1
    return plan.branches[index] if index < len(plan.branches) else None


def _run_completed(ctx: HandlerContext, plan: Plan) -> RunCompleted:
    chosen = final_round(completed_rounds(ctx.history), plan.final_answer, plan.branches)
    return ctx.new(
        RunCompleted,
        "completed",
        done_reason="evolved",
        answer=chosen.answer if chosen else None,
        score=chosen.correct if chosen else None,
    )
