"""Deciders of the reasoning episode: pure functions of (event, run history) -> events.

RunStarted -> ModelCallRequested(step 1)
ModelResponded -> ActionParsed, then ToolCallRequested | next ModelCallRequested | AnswerGraded(no answer)
ToolReturned / ToolFailed -> ModelCallRequested(next step)
(local_rag may add a recorded query rewrite and result summary: see handlers/episode/retrieval.py)
ModelCallFailed -> AnswerGraded(no answer, done reason model_failed / context_length)
AnswerGraded -> EpisodeEnded, TrajectorySealed, RunCompleted
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from events.base import Event
from events.episode import AnswerGraded, EpisodeEnded, TrajectorySealed, Turn
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.run import RunCompleted, RunStarted
from events.tool import ActionParsed, ToolFailed, ToolReturned
from handlers.context import HandlerContext
from handlers.domains import domain_of
from handlers.episode.model_choice import policy_model, sampling_params
from handlers.episode.parsing import parse_action
from handlers.episode.prompts import HistoryStep, render_policy_prompt
from handlers.episode.retrieval import is_summary_result, summary_request, tool_or_rewrite
from handlers.projections.episode import EpisodeState, episode_state
from handlers.rewards import compute_reward

MAIN = "main"


async def begin_episode(event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
    """A started ``reason`` run asks the policy for its first action."""
    if event.workflow != "reason":
        return []
    state = episode_state(ctx.history)
    return [request_policy_step(ctx, state, step=1)]


async def take_action(event: ModelResponded, ctx: HandlerContext) -> Sequence[Event]:
    """Project the reply onto one action and decide what follows it."""
    if event.role != "policy" or event.episode != MAIN:
        return []
    state = episode_state(ctx.history)
    if state.ended is not None or state.graded is not None:
        return []
    action = parse_reply(ctx, event, tools=enabled_tools(state.settings))
    max_steps = int(state.settings.get("episode", {}).get("max_steps", 4))
    return [action, *after_action(
        ctx, state, action, event, max_steps=max_steps,
        next_step=lambda after, step: request_policy_step(ctx, after, step=step),
    )]


def parse_reply(
    ctx: HandlerContext, event: ModelResponded, *, tools: list[str], accept_report: bool = False
) -> ActionParsed:
    """The reply as one recorded action (for any role and episode)."""
    parsed = parse_action(event.text, tools=_recognised(tools), accept_report=accept_report)
    valid_answer = parsed.kind == "answer" and parsed.valid
    final = domain_of(ctx.settings()).extract(event.text, parsed.answer) if valid_answer else None
    return ctx.new(
        ActionParsed, "action",
        call_id=event.call_id, role=event.role, step=event.step, kind=parsed.kind,
        action=parsed.action, valid=parsed.valid, tool=parsed.tool, tool_input=parsed.tool_input,
        answer=parsed.answer, final_answer=final, error=parsed.error,
        branch=event.branch, episode=event.episode,
    )


def after_action(
    ctx: HandlerContext,
    state: EpisodeState,
    action: ActionParsed,
    reply: ModelResponded,
    *,
    max_steps: int,
    next_step: Callable[[EpisodeState, int], Event],
) -> list[Event]:
    """What follows a policy action: nothing (grading answers it), a tool call, or the next step."""
    where = {"episode": reply.episode, "branch": reply.branch}
    if not reply.text.strip():
        return [no_answer(ctx, reply.step, "empty_action", "the model returned an empty reply", **where)]
    if action.kind == "answer" and action.valid:
        return []  # the grading effector answers ActionParsed(answer)
    if reply.step >= max_steps:
        return [no_answer(ctx, reply.step, "max_steps", "no valid answer within the step budget", **where)]
    if action.kind == "tool" and action.valid:
        return [tool_or_rewrite(ctx, state, action)]
    # An invalid turn: the error becomes the observation and the episode goes on.
    after = episode_state([*ctx.history, action], reply.episode)
    return [next_step(after, reply.step + 1)]


async def observe_tool(event: ToolReturned | ToolFailed, ctx: HandlerContext) -> Sequence[Event]:
    """A tool result is the observation of its step (once summarised, if asked): next step."""
    if event.episode != MAIN:
        return []
    state = episode_state(ctx.history)
    if state.ended is not None or state.graded is not None:
        return []
    summary = summary_request(ctx, state, event) if isinstance(event, ToolReturned) else None
    if summary is not None:
        return [summary]
    return [request_policy_step(ctx, state, step=event.step + 1)]


async def observe_summary(event: ModelResponded | ModelCallFailed, ctx: HandlerContext) -> Sequence[Event]:
    """A summarised (or unsummarisable) retrieval result is the observation: next step."""
    if event.episode != MAIN or not is_summary_result(event):
        return []
    state = episode_state(ctx.history)
    if state.ended is not None or state.graded is not None:
        return []
    return [request_policy_step(ctx, state, step=event.step + 1)]


async def end_on_model_failure(event: ModelCallFailed, ctx: HandlerContext) -> Sequence[Event]:
    """A model call that failed for good ends the episode with a recorded reason."""
    if event.episode != MAIN or event.role != "policy":
        return []
    reason = "context_length" if event.kind == "context_length" else "model_failed"
    return [no_answer(ctx, event.step, reason, f"{event.kind}: {event.message}")]


async def finish_episode(event: AnswerGraded, ctx: HandlerContext) -> Sequence[Event]:
    """The graded answer closes the episode: outcome, sealed trajectory, run completion."""
    if event.episode != MAIN:
        return []
    state = episode_state(ctx.history)
    problem = state.problem
    if problem is None or state.ended is not None:
        return []
    reward = compute_reward(state.settings, score=event.score, invalid_turns=state.invalid_turns,
                            steps=state.step, done_reason=event.done_reason)
    ended = ctx.new(
        EpisodeEnded, "ended",
        done_reason=event.done_reason, reward=reward, steps=state.step,
        invalid_turns=state.invalid_turns, answer=event.answer, episode=MAIN,
    )
    sealed = ctx.new(
        TrajectorySealed, "sealed",
        problem_id=problem.problem_id, group_id=problem.group_id or problem.run_id,
        sample_index=problem.sample_index, data_source=problem.data_source,
        group_size=problem.group_size,
        turns=trajectory_turns(state), reward=reward, score=event.score,
        done_reason=event.done_reason, invalid_turns=state.invalid_turns, model=state.model,
        complete=event.done_reason not in ("model_failed",), episode=MAIN,
    )
    completed = ctx.new(
        RunCompleted, "completed",
        done_reason=event.done_reason, answer=event.answer,
        score=event.score if event.method != "ungraded" else None,
    )
    return [ended, sealed, completed]


def request_policy_step(
    ctx: HandlerContext,
    state: EpisodeState,
    *,
    step: int,
    branch: str | None = None,
    model: dict[str, Any] | None = None,
    previous_solutions: str | None = None,
) -> ModelCallRequested:
    """Render the policy prompt for ``step`` of ``state``'s episode from the episode so far."""
    settings = state.settings
    episode = settings.get("episode", {})
    model = policy_model(settings) if model is None else model
    max_steps = int(episode.get("max_steps", 4))
    force = bool(episode.get("force_answer", True)) and step >= max_steps and max_steps > 1
    question = state.problem.question if state.problem else ""
    messages = render_policy_prompt(
        question,
        tools=enabled_tools(settings),
        history=[HistoryStep(action=s.response or "", observation=s.observation or "") for s in state.steps],
        history_length=int(episode.get("history_length", 4)),
        previous_solutions=previous_solutions,
        force_answer=force,
        system_prompt=model.get("system_prompt"),
        **domain_prompt(settings),
    )
    return ctx.new(
        ModelCallRequested, f"model-call-{step}",
        call_id=ctx.new_id(f"call-{step}"), role="policy", step=step, messages=list(messages),
        model=str(model.get("model", "")), params=sampling_params(model),
        purpose="force_answer" if force else "act", branch=branch, episode=state.episode,
    )


def trajectory_turns(state: EpisodeState) -> list[Turn]:
    return [
        Turn(
            step=s.step, prompt=list(s.prompt), response=s.response or "",
            valid=s.action.valid if s.action else False, observation=s.observation,
            prompt_token_ids=s.prompt_token_ids, response_token_ids=s.response_token_ids,
            response_logprobs=s.response_logprobs, tool=s.tool,
        )
        for s in state.steps
        if s.response is not None
    ]


def enabled_tools(settings: dict[str, Any]) -> list[str]:
    """The tool tags a run offers: the list recorded at its start (older runs: the flags)."""
    episode = settings.get("episode", {})
    if isinstance(episode.get("tools"), list):
        return [str(tag) for tag in episode["tools"]]
    tools = []
    if episode.get("enable_python_code", True):
        tools.append("python_code")
    if episode.get("enable_local_rag", False):
        tools.append("local_rag")
    tools.extend(t for t in episode.get("extra_tools", []) if t not in tools)
    return tools


def domain_prompt(settings: dict[str, Any]) -> dict[str, Any]:
    """Prompt parts a run recorded or its domain defines: tool usage, intro, answer usage."""
    domain = domain_of(settings)
    return {"tool_usage": dict(settings.get("tool_usage", {})), "intro": domain.intro,
            "answer_usage": domain.answer_usage}


def _recognised(enabled: list[str]) -> tuple[str, ...]:
    """Enabled tools first, then the other tags the protocol knows (so misuse is caught)."""
    from handlers.episode.parsing import DEFAULT_TOOL_TAGS

    return tuple(dict.fromkeys([*enabled, *DEFAULT_TOOL_TAGS]))


def no_answer(
    ctx: HandlerContext, step: int, reason: str, detail: str, *, episode: str = MAIN,
    branch: str | None = None,
) -> AnswerGraded:
    """The episode ends without an answer to grade (recorded as a zero grade)."""
    return ctx.new(
        AnswerGraded, "graded",
        step=step, answer=None, score=0.0, method="none",
        detail=detail, done_reason=reason, branch=branch, episode=episode,
    )
