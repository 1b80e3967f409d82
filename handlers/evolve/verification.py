"""Deciders of the verifier episodes: N verifiers check the brief, in parallel.

ModelResponded(summarizer) / ModelCallFailed(summarizer) -> N ModelCallRequested(verifier, step 1)
ModelResponded(verifier) -> ActionParsed, then a tool call, the next step, a format retry,
    or VerifierReported
ModelCallFailed(verifier) -> VerifierReported(judgment 0, reason model_failed)
VerifierReported -> ModelCallRequested(step 1 of the next waiting verifier, under a cap)

The N requests are emitted together; the dispatcher handles them concurrently, so
"in parallel" needs nothing more. With ``verifier_max_workers`` set, only that many
start together and each report starts the next waiting verifier. A reply that does not end in a ``<report>`` with
``\\boxed{1}`` or ``\\boxed{0}`` gets up to ``format_retries`` report-only retries,
each a recorded model call with purpose ``format_retry``.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.base import Event
from events.evolve import VerifierReported
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.tool import ActionParsed
from handlers.context import HandlerContext
from handlers.episode.flow import parse_reply
from handlers.episode.model_choice import sampling_params
from handlers.episode.prompt_record import prompt_fields
from handlers.episode.prompts import HistoryStep, render_verifier_prompt
from handlers.episode.retrieval import tool_or_rewrite
from handlers.evolve.plan import Plan, episode_id, parse_episode, plan_of_run
from handlers.evolve.view import round_view, trajectory_text
from handlers.grading.extraction import last_boxed
from handlers.projections.episode import EpisodeState, episode_state

RETRY = "format_retry"
_BRIEF_LIMIT = 12000


async def start_verifiers(
    event: ModelResponded | ModelCallFailed, ctx: HandlerContext
) -> Sequence[Event]:
    """The brief is ready (or the summarizer failed): ask every verifier at once."""
    ref = parse_episode(event.branch, event.episode)
    if ref is None or ref.kind != "summary":
        return []
    plan = plan_of_run(ctx.run_settings())
    return request_verifiers(
        ctx, plan, event.branch, ref.round, brief_of(ctx, event.branch, ref.round)
    )


def request_verifiers(
    ctx: HandlerContext, plan: Plan, branch: str | None, round_: int, brief: str
) -> list[Event]:
    """Step 1 of every verifier episode of the round."""
    return [
        verifier_step(
            ctx,
            plan,
            episode_state(ctx.history, episode_id(branch, round_, "verifier", i)),
            branch,
            round_,
            i,
            step=1,
            brief=brief,
        )
        for i in plan.initial_verifiers()
    ]


async def start_waiting_verifier(event: VerifierReported, ctx: HandlerContext) -> Sequence[Event]:
    """Under ``verifier_max_workers``, a report frees a slot: the next waiting verifier starts."""
    plan = plan_of_run(ctx.run_settings())
    index = plan.waiting_verifier(len(round_view(ctx.history, event.branch, event.round).reports))
    if index is None:
        return []
    state = episode_state(ctx.history, episode_id(event.branch, event.round, "verifier", index))
    if state.steps:
        return []  # already started
    brief = brief_of(ctx, event.branch, event.round)
    return [verifier_step(ctx, plan, state, event.branch, event.round, index, step=1, brief=brief)]


def brief_of(ctx: HandlerContext, branch: str | None, round_: int) -> str:
    """The summarizer's brief; without one, the tail of the policy trajectory."""
    view = round_view(ctx.history, branch, round_)
    if view.summary and view.summary.strip():
        return view.summary
    policy = episode_state(ctx.history, episode_id(branch, round_, "policy"))
    return trajectory_text(policy)[-_BRIEF_LIMIT:]


def verifier_step(
    ctx: HandlerContext,
    plan: Plan,
    state: EpisodeState,
    branch: str | None,
    round_: int,
    index: int,
    *,
    step: int,
    brief: str,
    purpose: str = "act",
) -> ModelCallRequested:
    """Render verifier ``index``'s prompt for ``step`` (report only on the last step and on retries)."""
    settings = plan.verifier_episode
    model = state.run.role_models(branch)["verifier"]
    force = purpose == RETRY or step >= settings.max_steps
    question = state.problem.question if state.problem else ""
    messages = render_verifier_prompt(
        question,
        brief,
        tools=settings.tools,
        history=[
            HistoryStep(action=s.response or "", observation=s.observation or "")
            for s in state.steps
        ],
        history_length=settings.history_length,
        force_report=force,
        system_prompt=model.system_prompt,
    )
    label = f"verifier-{index}-call-{step}"
    recorded_purpose = purpose if purpose == RETRY else ("force_report" if force else "act")
    return ctx.new(
        ModelCallRequested,
        label,
        call_id=ctx.new_id(label),
        role="verifier",
        step=step,
        **prompt_fields(state, messages, recorded_purpose),
        model=model.model,
        params=sampling_params(model),
        purpose=recorded_purpose,
        branch=branch,
        episode=episode_id(branch, round_, "verifier", index),
    )


async def take_verifier_action(event: ModelResponded, ctx: HandlerContext) -> Sequence[Event]:
    """A verifier reply: a report ends the episode; a tool call or a bad turn continues it."""
    ref = parse_episode(event.branch, event.episode)
    if ref is None or ref.kind != "verifier" or event.role != "verifier":
        return []
    if ref.index in round_view(ctx.history, event.branch, ref.round).reports:
        return []
    state = episode_state(ctx.history, event.episode)
    plan = plan_of_run(state.run)
    action = parse_reply(ctx, event, tools=plan.verifier_episode.tools, accept_report=True)
    after = episode_state([*ctx.history, action], event.episode)
    judgment = judgment_of(action.answer) if action.kind == "report" and action.valid else None
    if judgment is not None:
        return [action, _reported(ctx, event, ref.round, ref.index, judgment, action, after)]
    last = event.step >= plan.verifier_episode.max_steps
    if action.kind == "tool" and action.valid and not last:
        return [action, tool_or_rewrite(ctx, state, action)]
    if not last and action.kind != "report" and event.purpose != RETRY:
        return [action, _next(ctx, plan, after, event, ref.round, ref.index)]
    return [action, _retry_or_give_up(ctx, plan, after, event, ref.round, ref.index)]


def continue_verifier(
    ctx: HandlerContext, state: EpisodeState, branch: str | None, round_: int, index: int, step: int
) -> list[Event]:
    """The next verifier step after a tool result."""
    if index in round_view(ctx.history, branch, round_).reports:
        return []
    plan = plan_of_run(state.run)
    return [
        verifier_step(
            ctx, plan, state, branch, round_, index, step=step, brief=brief_of(ctx, branch, round_)
        )
    ]


async def verifier_failed(event: ModelCallFailed, ctx: HandlerContext) -> Sequence[Event]:
    """A verifier whose model failed for good counts as a rejection, recorded as such."""
    ref = parse_episode(event.branch, event.episode)
    if ref is None or ref.kind != "verifier":
        return []
    if ref.index in round_view(ctx.history, event.branch, ref.round).reports:
        return []
    state = episode_state(ctx.history, event.episode)
    return [
        ctx.new(
            VerifierReported,
            "reported",
            round=ref.round,
            verifier=ref.index,
            judgment=0,
            report="",
            valid=False,
            retries=_retries(state, ctx.history),
            reason="model_failed",
            branch=event.branch,
        )
    ]


def judgment_of(report: str | None) -> int | None:
    """1 or 0 from the last ``\\boxed{}`` of a report body; ``None`` when it holds neither."""
    if report is None:
        return None
    boxed = last_boxed(report)
    value = boxed.strip() if boxed is not None else None
    return int(value) if value in ("0", "1") else None


def _reported(
    ctx: HandlerContext,
    event: ModelResponded,
    round_: int,
    index: int,
    judgment: int,
    action: ActionParsed,
    state: EpisodeState,
) -> VerifierReported:
    return ctx.new(
        VerifierReported,
        "reported",
        round=round_,
        verifier=index,
        judgment=judgment,
        report=action.answer or "",
        valid=True,
        retries=_retries(state, ctx.history),
        reason="report",
        branch=event.branch,
    )


def _next(
    ctx: HandlerContext,
    plan: Plan,
    state: EpisodeState,
    event: ModelResponded,
    round_: int,
    index: int,
    **options: str,
) -> ModelCallRequested:
    return verifier_step(
        ctx,
        plan,
        state,
        event.branch,
        round_,
        index,
        step=event.step + 1,
        brief=brief_of(ctx, event.branch, round_),
        **options,
    )


def _retry_or_give_up(
    ctx: HandlerContext,
    plan: Plan,
    state: EpisodeState,
    event: ModelResponded,
    round_: int,
    index: int,
) -> Event:
    retries = _retries(state, ctx.history)
    if retries < plan.format_retries:
        return _next(ctx, plan, state, event, round_, index, purpose=RETRY)
    return ctx.new(
        VerifierReported,
        "reported",
        round=round_,
        verifier=index,
        judgment=0,
        report="",
        valid=False,
        retries=retries,
        reason="no_valid_report",
        branch=event.branch,
    )


def _retries(state: EpisodeState, history: Sequence[Event]) -> int:
    """Format retries so far: the episode's model calls made as retries."""
    return sum(
        1
        for e in history
        if isinstance(e, ModelCallRequested) and e.episode == state.episode and e.purpose == RETRY
    )
