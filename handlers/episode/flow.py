"""Deciders of the reasoning episode: pure functions of (event, run history) -> events.

RunStarted -> ModelCallRequested(step 1)
ModelResponded -> ActionParsed, then ToolCallRequested | next ModelCallRequested | AnswerGraded(no answer)
ToolReturned / ToolFailed -> ModelCallRequested(next step)
(local_rag may add a recorded query rewrite and result summary: see handlers/episode/retrieval.py)
ModelCallFailed -> AnswerGraded(no answer, done reason model_failed / context_length)
AnswerGraded -> EpisodeEnded, TrajectorySealed, RunCompleted

That is apollo's protocol; under ``episode.protocol`` ``reference_test`` or
``reference_evolve`` the move after a reply comes from handlers/episode/protocol.py
(any reply may end the episode; the grading effector grades the whole stepped text).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from events.base import Event
from events.episode import AnswerGraded, EpisodeEnded, TrajectorySealed, Turn
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.run import RunCompleted, RunStarted
from events.tool import ActionParsed, ToolFailed, ToolReturned
from handlers.context import HandlerContext
from handlers.episode.model_choice import sampling_params
from handlers.episode.moves import call_purpose, next_move
from handlers.episode.parsing import DEFAULT_TOOL_TAGS, ParsedAction, parse_action
from handlers.episode.prompt_record import prompt_fields
from handlers.episode.prompts import HistoryStep, render_plain_prompt, render_policy_chat, render_policy_prompt
from handlers.episode.protocol import (
    ANSWER_REASK,
    ANSWER_RETRY,
    APOLLO,
    FALLBACK_ANSWER,
    REFERENCE_EVOLVE,
    REFERENCE_TEST,
    answer_tries,
    env_tool_calls,
    has_answer_tags,
    protocol_of,
    single_turn,
)
from handlers.episode.retrieval import is_summary_result, summary_request, tool_or_rewrite
from handlers.projections.episode import EpisodeState, episode_state, step_record
from handlers.projections.episode import evolve as fold_event
from handlers.rewards import compute_reward
from handlers.run_settings import ModelSpec, RunSettings

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
    action = parse_reply(ctx, event, tools=enabled_tools(state.run))
    max_steps = state.run.episode.max_steps
    return [action, *after_action(
        ctx, state, action, event, max_steps=max_steps,
        next_step=lambda after, step: request_policy_step(ctx, after, step=step),
    )]


def parse_reply(
    ctx: HandlerContext, event: ModelResponded, *, tools: list[str], accept_report: bool = False
) -> ActionParsed:
    """The reply as one recorded action (for any role and episode).

    A policy reply follows the run's protocol: a single-turn (``max_steps: 1``) apollo
    reply is its answer; ``reference_test`` records the tool its env runs (the first
    raw tool block, which may differ from the projected action); ``reference_evolve``
    projects reports too and steps the reference's fallback answer after the last
    force-answer ask failed.
    """
    settings = ctx.run_settings()
    protocol = protocol_of(settings) if event.role == "policy" else APOLLO
    text = event.text
    if protocol == REFERENCE_EVOLVE:
        accept_report = True
        text = _stepped_reply(ctx, event, settings)
    parsed = parse_action(text, tools=_recognised(tools), accept_report=accept_report)
    if protocol == APOLLO and event.role == "policy" and single_turn(settings):
        parsed = _single_turn_answer(text, parsed)
    if protocol == REFERENCE_TEST:
        parsed = _with_env_tool(text, parsed)
    if protocol != APOLLO and not _tool_may_run(event, settings):
        # ``tool`` names the call that runs: none on the last step or for an answer ask.
        parsed = msgspec.structs.replace(parsed, tool=None, tool_input=None)
    valid_answer = parsed.kind == "answer" and parsed.valid
    problem = episode_state(ctx.history).problem
    question = problem.question if problem is not None else None
    final = ctx.catalog.domain_of(settings).final_answer(text, parsed.answer, question) if valid_answer else None
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
    if protocol_of(state.run) != APOLLO:
        return _reference_after_action(ctx, state, action, next_step)
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


def _reference_after_action(
    ctx: HandlerContext,
    state: EpisodeState,
    action: ActionParsed,
    next_step: Callable[[EpisodeState, int], Event],
) -> list[Event]:
    """Under a reference protocol: a tool call, the next (or a repeated) ask, or the end.

    The end needs no event here: the grading effector sees the same move and grades.
    """
    after = fold_event(state, action)
    move = next_move(after)
    if move is None or move.kind == "end":
        return []
    if move.kind == "tool":
        return [tool_or_rewrite(ctx, after, action)]
    return [next_step(after, move.step)]


def _stepped_reply(ctx: HandlerContext, event: ModelResponded, settings: RunSettings) -> str:
    """The reply, or the reference's fallback answer once the last force-answer ask failed."""
    if event.purpose != ANSWER_REASK or has_answer_tags(event.text):
        return event.text
    record = step_record(episode_state(ctx.history, event.episode), event.step)
    if record is not None and record.reasks >= answer_tries(settings):
        return FALLBACK_ANSWER
    return event.text


def _tool_may_run(event: ModelResponded, settings: RunSettings) -> bool:
    return event.step < settings.episode.max_steps and event.purpose not in (ANSWER_REASK, ANSWER_RETRY)


def _single_turn_answer(text: str, parsed: ParsedAction) -> ParsedAction:
    """A one-step episode asks for no action tags: any non-blank reply is the answer."""
    if not text.strip():
        return parsed
    answer = parsed.answer if parsed.kind == "answer" else None
    action = parsed.action if parsed.kind == "answer" else ""
    return ParsedAction(kind="answer", action=action, valid=True, answer=answer)


def _with_env_tool(text: str, parsed: ParsedAction) -> ParsedAction:
    """The projected action with the tool the reference's training env would run."""
    calls = env_tool_calls(text)
    if not calls:
        return msgspec.structs.replace(parsed, tool=None, tool_input=None)
    tool, body = calls[0]
    return msgspec.structs.replace(parsed, tool=tool, tool_input=body)


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
    reward = compute_reward(state.run, ctx.catalog, score=event.score, invalid_turns=state.invalid_turns,
                            steps=state.step, done_reason=event.done_reason)
    ended = ctx.new(
        EpisodeEnded, "ended",
        done_reason=event.done_reason, reward=reward, steps=state.step,
        invalid_turns=state.invalid_turns, answer=event.answer, episode=MAIN,
    )
    turns = trajectory_turns(state)
    sealed = ctx.new(
        TrajectorySealed, "sealed",
        problem_id=problem.problem_id, group_id=problem.group_id or problem.run_id,
        sample_index=problem.sample_index, data_source=problem.data_source,
        group_size=problem.group_size, **version_fields(turns),
        turns=turns, reward=reward, score=event.score,
        done_reason=event.done_reason, invalid_turns=state.invalid_turns, model=state.model,
        complete=event.done_reason not in ("model_failed",), episode=MAIN,
        # No ground truth: the 0 is not a grade, so a ground-truth trainer must skip it.
        graded=problem.ground_truth is not None and event.method != "ungraded",
        grader=event.grader, grader_version=event.grader_version,
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
    model: ModelSpec | None = None,
    previous_solutions: str | None = None,
) -> ModelCallRequested:
    """Render the policy prompt for ``step`` of ``state``'s episode from the episode so far."""
    settings = state.run
    model = settings.model_for("policy") if model is None else model
    purpose = call_purpose(state, step)
    question = state.problem.question if state.problem else ""
    plain = purpose == "act" and not previous_solutions and protocol_of(settings) != REFERENCE_EVOLVE
    if single_turn(settings) and plain:
        messages = single_turn_prompt(ctx, question, settings, model.system_prompt)
    elif settings.episode.prompt_layout == "chat" and protocol_of(settings) == APOLLO:
        messages = render_policy_chat(
            question,
            tools=() if single_turn(settings) else enabled_tools(settings),
            history=[HistoryStep(action=s.response or "", observation=s.observation or "")
                     for s in state.steps if s.step < step],
            previous_solutions=previous_solutions,
            force_answer=purpose != "act",
            system_prompt=model.system_prompt,
            **domain_prompt(ctx, settings),
        )
    else:
        messages = render_policy_prompt(
            question,
            tools=() if single_turn(settings) else enabled_tools(settings),
            history=[HistoryStep(action=s.response or "", observation=s.observation or "")
                     for s in state.steps if s.step < step],
            history_length=settings.episode.history_length,
            previous_solutions=previous_solutions,
            force_answer=purpose != "act",
            system_prompt=model.system_prompt,
            **domain_prompt(ctx, settings),
        )
    return ctx.new(
        ModelCallRequested, f"model-call-{step}",
        call_id=ctx.new_id(f"call-{step}"), role="policy", step=step, **prompt_fields(state, messages, purpose),
        model=model.model, params=sampling_params(model),
        purpose=purpose, branch=branch, episode=state.episode,
    )


def single_turn_prompt(ctx: HandlerContext, question: str, settings: RunSettings,
                       system_prompt: str | None) -> list[Any]:
    """The one-step prompt: no tools, no action tags (a domain with its own answer format
    keeps its answer-only prompt, since the plain one asks for a boxed LaTeX answer)."""
    parts = domain_prompt(ctx, settings)
    if parts["answer_usage"] is None:
        return render_plain_prompt(question, system_prompt=system_prompt)
    return render_policy_prompt(question, tools=(), system_prompt=system_prompt, **parts)


def version_fields(turns: list[Turn]) -> dict[str, Any]:
    """A trajectory's policy versions: every distinct one of its turns, and the oldest
    (as text), from which a trainer counts its staleness."""
    versions = sorted({t.policy_version for t in turns if t.policy_version is not None})
    return {"policy_versions": versions, "policy_version": str(versions[0]) if versions else None}


def trajectory_turns(state: EpisodeState) -> list[Turn]:
    return [
        Turn(
            step=s.step, prompt=list(s.prompt), response=s.response or "",
            valid=s.action.valid if s.action else False, observation=s.observation,
            prompt_token_ids=s.prompt_token_ids, response_token_ids=s.response_token_ids,
            response_logprobs=s.response_logprobs, tool=s.tool, policy_version=s.policy_version,
        )
        for s in state.steps
        if s.response is not None
    ]


def enabled_tools(settings: RunSettings) -> list[str]:
    """The tool tags a run offers: the list recorded at its start (older runs: the flags)."""
    episode = settings.episode
    if episode.tools is not None:
        return list(episode.tools)
    tools = []
    if episode.enable_python_code:
        tools.append("python_code")
    if episode.enable_local_rag:
        tools.append("local_rag")
    return tools


def domain_prompt(ctx: HandlerContext, settings: RunSettings) -> dict[str, Any]:
    """Prompt parts a run recorded or its domain defines: tool usage, intro, answer usage."""
    domain = ctx.catalog.domain_of(settings)
    return {"tool_usage": dict(settings.tool_usage), "intro": domain.intro,
            "answer_usage": domain.answer_usage}


def _recognised(enabled: list[str]) -> tuple[str, ...]:
    """Enabled tools first, then the other tags the protocol knows (so misuse is caught)."""
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
