"""Effectors: each performs exactly one model, tool or grading call and records it.

Their single output is labelled ``result`` so the dispatcher can tell the effect
already happened (and never repeats it after a crash). Replay never runs them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import msgspec

from events.base import Event
from events.episode import AnswerGraded
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.text_delta import DeltaError
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned
from handlers.context import HandlerContext
from handlers.episode.graded_input import answer_block_text, ending_text, run_grader
from handlers.episode.moves import next_move
from handlers.episode.protocol import APOLLO, WHOLE_TEXT_GRADERS, protocol_of
from handlers.grading.reference import extracted_answer
from handlers.ports import ModelError, ToolError, ToolOptions, grading_metadata
from handlers.projections.episode import EpisodeState, episode_state
from handlers.projections.prompts import resolved_prompt
from handlers.run_settings import RunSettingsError

RESULT = "result"


async def call_model(event: ModelCallRequested, ctx: HandlerContext) -> Sequence[Event]:
    """Ask the role's model; a failure after retries is data, not an exception."""
    common = {"call_id": event.call_id, "role": event.role, "step": event.step,
              "purpose": event.purpose, "branch": event.branch, "episode": event.episode}
    try:
        spec = ctx.run_settings().model_of_call(event.role, event.branch)
    except RunSettingsError as exc:  # garbage recorded settings fail the call, never the worker
        return [ctx.new(ModelCallFailed, RESULT, kind="bad_response", message=str(exc)[:2000], attempts=0, **common)]
    if event.model and event.model != spec.model:  # the request's recorded name is what is asked for
        spec = msgspec.structs.replace(spec, model=event.model)
    try:
        messages = resolved_prompt(ctx.history, event)
    except DeltaError as exc:  # a corrupt record fails the call, never the worker
        return [ctx.new(ModelCallFailed, RESULT, kind="bad_response", message=str(exc)[:2000], attempts=0, **common)]
    client = ctx.services.models.client_for(event.role, spec, branch=event.branch)
    try:
        reply = await client.complete(messages, event.params)
    except ModelError as exc:
        return [ctx.new(ModelCallFailed, RESULT, kind=exc.kind, message=exc.message[:2000],
                        attempts=exc.attempts, **common)]
    return [
        ctx.new(
            ModelResponded, RESULT, text=reply.text, model=reply.model,
            finish_reason=reply.finish_reason, usage=reply.usage, latency_ms=reply.latency_ms,
            attempts=reply.attempts, retried=reply.retried, prompt_token_ids=reply.prompt_token_ids,
            token_ids=reply.token_ids, logprobs=reply.logprobs, policy_version=reply.policy_version,
            server_timings=reply.server_timings, **common,
        )
    ]


async def run_tool(event: ToolCallRequested, ctx: HandlerContext) -> Sequence[Event]:
    """Run one tool call; tool-level errors come back as results the model can read."""
    common = {"call_id": event.call_id, "role": event.role, "step": event.step,
              "tool": event.tool, "branch": event.branch, "episode": event.episode}
    started = time.perf_counter()
    try:
        options = ToolOptions(episode=ctx.run_settings().tool_episode(event.role), role=event.role)
        result = await ctx.services.tools.run(event.tool, event.input, options)
    except ToolError as exc:
        return [ctx.new(ToolFailed, RESULT, error=exc.message[:4000], kind=exc.kind, **common)]
    except RunSettingsError as exc:  # garbage recorded settings fail the call, never the worker
        return [ctx.new(ToolFailed, RESULT, error=str(exc)[:4000], kind="error", **common)]
    latency = (time.perf_counter() - started) * 1000
    return [ctx.new(ToolReturned, RESULT, result=result.text, score=result.score,
                    latency_ms=latency, **common)]


async def grade_answer(event: ActionParsed, ctx: HandlerContext) -> Sequence[Event]:
    """Grade the episode's answer against the ground truth (never shown to a model).

    Under ``apollo`` a valid answer is graded; under a reference protocol the action
    that ends the episode (:func:`handlers.episode.moves.next_move`) is, whatever
    its kind, on the text the reference grades.
    """
    if event.role != "policy":
        return []
    if protocol_of(ctx.run_settings()) == APOLLO:
        if event.kind != "answer" or not event.valid:
            return []
        return [await _grade_answer_block(ctx, event, episode_state(ctx.history, event.episode))]
    state = episode_state(ctx.history, event.episode)
    move = next_move(state)
    if move is None or move.kind != "end" or state.graded is not None:
        return []
    return [await _grade_reference_ending(ctx, event, state, done_reason=move.done_reason)]


async def _grade_answer_block(ctx: HandlerContext, event: ActionParsed, state: EpisodeState) -> AnswerGraded:
    problem = state.problem
    truth = problem.ground_truth if problem else None
    mode = run_grader(state.run)
    common = {"step": event.step, "answer": event.final_answer, "role": event.role,
              "branch": event.branch, "episode": event.episode, "ground_truth": truth}
    if truth is None:
        return ctx.new(AnswerGraded, RESULT, score=0.0, method="ungraded",
                       detail="no ground truth given", **common)
    if not event.final_answer:
        return ctx.new(AnswerGraded, RESULT, score=0.0, method=mode,
                       detail="the reply holds no final answer", **common)
    text = answer_block_text(state, event.final_answer, mode)
    metadata = grading_metadata(problem.question, problem.metadata) if problem else {}
    grade = await ctx.services.grader.grade(text, truth, mode, metadata=metadata)
    return ctx.new(AnswerGraded, RESULT, score=grade.score, method=grade.method,
                   detail=grade.detail, grader=grade.grader, grader_version=grade.grader_version, **common)


async def _grade_reference_ending(
    ctx: HandlerContext, event: ActionParsed, state: EpisodeState, *, done_reason: str
) -> AnswerGraded:
    """A reference protocol's end: the whole stepped text for the reference graders,
    the last reply's final answer for any other grader the run names."""
    problem = state.problem
    truth = problem.ground_truth if problem else None
    mode = run_grader(state.run)
    last = state.last()
    whole_text = mode in WHOLE_TEXT_GRADERS
    text = ending_text(state, mode, ctx.catalog)
    common = {"step": last.step if last else event.step, "role": event.role, "branch": event.branch,
              "episode": event.episode, "ground_truth": truth, "done_reason": done_reason}
    if truth is None:
        return ctx.new(AnswerGraded, RESULT, score=0.0, method="ungraded", answer=None if whole_text else text,
                       detail="no ground truth given", **common)
    if not text or not text.strip():
        return ctx.new(AnswerGraded, RESULT, score=0.0, method=mode, answer=None,
                       detail="nothing to grade", **common)
    metadata = grading_metadata(problem.question, problem.metadata) if problem else {}
    grade = await ctx.services.grader.grade(text, truth, mode, metadata=metadata)
    answer = extracted_answer(grade.detail) if whole_text else text
    return ctx.new(AnswerGraded, RESULT, score=grade.score, method=grade.method, answer=answer,
                   detail=grade.detail, grader=grade.grader, grader_version=grade.grader_version, **common)
