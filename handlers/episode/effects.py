"""Effectors: each performs exactly one model, tool or grading call and records it.

Their single output is labelled ``result`` so the dispatcher can tell the effect
already happened (and never repeats it after a crash). Replay never runs them.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from events.base import Event
from events.episode import AnswerGraded
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned
from handlers.context import HandlerContext
from handlers.evolve.plan import branch_settings, tool_settings_for
from handlers.ports import ModelError, ToolError
from handlers.projections.episode import episode_state

RESULT = "result"


async def call_model(event: ModelCallRequested, ctx: HandlerContext) -> Sequence[Event]:
    """Ask the role's model; a failure after retries is data, not an exception."""
    # A branch's calls see its own models under the plain role names.
    settings = branch_settings(ctx.settings(), event.branch)
    client = ctx.services.models.client_for(event.role, event.model, settings)
    common = {"call_id": event.call_id, "role": event.role, "step": event.step,
              "purpose": event.purpose, "branch": event.branch, "episode": event.episode}
    try:
        reply = await client.complete(event.messages, event.params)
    except ModelError as exc:
        return [ctx.new(ModelCallFailed, RESULT, kind=exc.kind, message=exc.message[:2000],
                        attempts=exc.attempts, **common)]
    return [
        ctx.new(
            ModelResponded, RESULT, text=reply.text, model=reply.model,
            finish_reason=reply.finish_reason, usage=reply.usage, latency_ms=reply.latency_ms,
            attempts=reply.attempts, prompt_token_ids=reply.prompt_token_ids,
            token_ids=reply.token_ids, logprobs=reply.logprobs, **common,
        )
    ]


async def run_tool(event: ToolCallRequested, ctx: HandlerContext) -> Sequence[Event]:
    """Run one tool call; tool-level errors come back as results the model can read."""
    common = {"call_id": event.call_id, "role": event.role, "step": event.step,
              "tool": event.tool, "branch": event.branch, "episode": event.episode}
    started = time.perf_counter()
    try:
        settings = tool_settings_for(ctx.settings(), event.role)  # verifiers: their own switches
        result = await ctx.services.tools.run(event.tool, event.input, settings)
    except ToolError as exc:
        return [ctx.new(ToolFailed, RESULT, error=exc.message[:4000], kind=exc.kind, **common)]
    latency = (time.perf_counter() - started) * 1000
    return [ctx.new(ToolReturned, RESULT, result=result.text, score=result.score,
                    latency_ms=latency, **common)]


async def grade_answer(event: ActionParsed, ctx: HandlerContext) -> Sequence[Event]:
    """Grade a valid final answer against the ground truth (never shown to a model)."""
    if event.kind != "answer" or not event.valid or event.role != "policy":
        return []
    state = episode_state(ctx.history, event.episode)
    problem = state.problem
    truth = problem.ground_truth if problem else None
    mode = str(state.settings.get("episode", {}).get("grading") or "math_verify")
    common = {"step": event.step, "answer": event.final_answer, "role": event.role,
              "branch": event.branch, "episode": event.episode, "ground_truth": truth}
    if truth is None:
        return [ctx.new(AnswerGraded, RESULT, score=0.0, method="ungraded",
                        detail="no ground truth given", **common)]
    if not event.final_answer:
        return [ctx.new(AnswerGraded, RESULT, score=0.0, method=mode,
                        detail="the answer block holds no final answer", **common)]
    graded_text = event.final_answer
    if mode == "reference":
        # The reference grades the concatenated raw replies with its own extraction.
        graded_text = "\n".join(step.response or "" for step in state.steps)
    grade = await ctx.services.grader.grade(graded_text, truth, mode, metadata=dict(problem.metadata))
    return [ctx.new(AnswerGraded, RESULT, score=grade.score, method=grade.method,
                    detail=grade.detail, **common)]
