"""Deciders that start rounds and run each round's policy episode.

RunStarted(evolve) -> RoundStarted(round 0) for the first branches
RoundStarted -> ModelCallRequested(policy, step 1, previous solutions from memory)
ModelResponded(policy) -> ActionParsed, then a tool call or the next step (grading answers an answer)
AnswerGraded(policy) -> EpisodeEnded, then the summarizer call (or the verifiers, or the round's end)
"""

from __future__ import annotations

from collections.abc import Sequence

from events.base import Event
from events.episode import AnswerGraded, EpisodeEnded
from events.evolve import RoundStarted
from events.model import ModelCallRequested, ModelResponded
from events.run import RunStarted
from handlers.context import HandlerContext
from handlers.episode.flow import (
    after_action,
    enabled_tools,
    parse_reply,
    request_policy_step,
)
from handlers.episode.model_choice import sampling_params
from handlers.episode.prompts import (
    PreviousSolution,
    format_previous_solutions,
    render_summarizer_prompt,
)
from handlers.evolve.plan import Plan, episode_id, parse_episode, plan_of_run
from handlers.evolve.verdict import complete_round
from handlers.evolve.verification import request_verifiers
from handlers.evolve.view import round_view, trajectory_text
from handlers.projections.episode import EpisodeState, episode_state
from handlers.projections.memory import memory_state, retrieve


async def begin_evolve(event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
    """An evolve run starts round 0 of its first ``branch_max_workers`` branches."""
    if event.workflow != "evolve":
        return []
    plan = plan_of_run(ctx.run_settings())
    return [start_round(ctx, plan, branch, 0) for branch in plan.initial_branches()]


def start_round(ctx: HandlerContext, plan: Plan, branch: str | None, round_: int) -> RoundStarted:
    """Freeze the memory this round shows: the best earlier attempts, as readable text."""
    question = _question(ctx)
    seed = f"{ctx.event.run_id}/{branch}/{round_}"
    entries = retrieve(
        memory_state(ctx.history),
        plan.solution_memory,  # type: ignore[arg-type]
        plan.scored_history_length,
        strategy=plan.retrieval,  # type: ignore[arg-type]
        seed=seed,
        query=question,
    )
    shown = [
        PreviousSolution(solution=e.solution, feedback=e.feedback, vote=e.vote) for e in entries
    ]
    return ctx.new(
        RoundStarted,
        f"round-{branch}-{round_}",
        round=round_,
        branch=branch,
        previous_solutions=format_previous_solutions(shown),
        memory_entries=[e.entry_id for e in entries],
    )


async def request_first_step(event: RoundStarted, ctx: HandlerContext) -> Sequence[Event]:
    """The round's policy episode asks for its first action."""
    state = episode_state(ctx.history, episode_id(event.branch, event.round, "policy"))
    if state.steps:
        return []
    return [_policy_step(ctx, state, event, step=1)]


async def take_policy_action(event: ModelResponded, ctx: HandlerContext) -> Sequence[Event]:
    """A round's policy reply becomes an action, like in a reasoning episode."""
    ref = parse_episode(event.branch, event.episode)
    if ref is None or ref.kind != "policy" or event.role != "policy":
        return []
    state = episode_state(ctx.history, event.episode)
    started = round_view(ctx.history, event.branch, ref.round).started
    if state.ended is not None or state.graded is not None or started is None:
        return []
    action = parse_reply(ctx, event, tools=enabled_tools(state.run))
    max_steps = state.run.episode.max_steps
    return [
        action,
        *after_action(
            ctx,
            state,
            action,
            event,
            max_steps=max_steps,
            next_step=lambda after, step: _policy_step(ctx, after, started, step=step),
        ),
    ]


def continue_policy(
    ctx: HandlerContext, state: EpisodeState, branch: str | None, round_: int, step: int
) -> list[Event]:
    """The next policy step after a tool result."""
    started = round_view(ctx.history, branch, round_).started
    if started is None or state.ended is not None or state.graded is not None:
        return []
    return [_policy_step(ctx, state, started, step=step)]


async def finish_policy(event: AnswerGraded, ctx: HandlerContext) -> Sequence[Event]:
    """The round's answer is in: close the policy episode and have its trajectory condensed."""
    ref = parse_episode(event.branch, event.episode)
    if ref is None or ref.kind != "policy":
        return []
    state = episode_state(ctx.history, event.episode)
    if state.ended is not None:
        return []
    ended = ctx.new(
        EpisodeEnded,
        "ended",
        done_reason=event.done_reason,
        reward=event.score,
        steps=state.step,
        invalid_turns=state.invalid_turns,
        answer=event.answer,
        branch=event.branch,
        episode=event.episode,
    )
    plan = plan_of_run(state.run)
    if not plan.enable_verify:
        return [
            ended,
            *complete_round(ctx, [*ctx.history, ended], plan, event.branch, ref.round, None, ""),
        ]
    if not plan.summarize:
        return [
            ended,
            *request_verifiers(ctx, plan, event.branch, ref.round, trajectory_text(state)),
        ]
    return [ended, _summarizer_call(ctx, state, event.branch, ref.round)]


def _summarizer_call(
    ctx: HandlerContext, state: EpisodeState, branch: str | None, round_: int
) -> ModelCallRequested:
    model = state.run.role_models(branch)["summarizer"]
    messages = render_summarizer_prompt(trajectory_text(state), system_prompt=model.system_prompt)
    return ctx.new(
        ModelCallRequested,
        "summarize",
        call_id=ctx.new_id("summarize"),
        role="summarizer",
        step=1,
        messages=messages,
        model=model.model,
        params=sampling_params(model),
        purpose="summarize",
        branch=branch,
        episode=episode_id(branch, round_, "summary"),
    )


def _policy_step(
    ctx: HandlerContext, state: EpisodeState, started: RoundStarted, *, step: int
) -> ModelCallRequested:
    return request_policy_step(
        ctx,
        state,
        step=step,
        branch=started.branch,
        model=state.run.role_models(started.branch)["policy"],
        previous_solutions=started.previous_solutions or None,
    )


def _question(ctx: HandlerContext) -> str:
    view = round_view(ctx.history, None, -1)
    return view.problem.question if view.problem else ""
