"""The optional model calls around a local_rag search: query rewrite before, summary after.

Both are ordinary recorded model calls (roles ``rag_rewriter`` and ``rag_summarizer``),
so replay re-runs these deciders over the recorded replies and makes no call:

    ActionParsed(local_rag) -> ModelCallRequested(rag_rewriter)       [episode.rag_rewrite_query]
    ModelResponded | ModelCallFailed(rag_rewriter) -> ToolCallRequested(local_rag)
    ToolReturned(local_rag) -> ModelCallRequested(rag_summarizer)      [episode.rag_summarize]
    ModelResponded | ModelCallFailed(rag_summarizer) -> the episode's next step

A failed or empty rewrite searches with the model's own query; a failed or empty
summary leaves the raw hits as the observation (the projection decides which).
Both calls belong to the step of the policy (or verifier) action they serve.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from events.base import Event
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.tool import ActionParsed, ToolCallRequested, ToolReturned
from handlers.context import HandlerContext
from handlers.episode.model_choice import sampling_params
from handlers.episode.rag_prompts import clean_rewrite, rewrite_messages, summary_messages
from handlers.projections.episode import EpisodeState, episode_state, step_record
from handlers.roles import RAG_REWRITER, RAG_SUMMARIZER

LOCAL_RAG = "local_rag"


def tool_or_rewrite(ctx: HandlerContext, state: EpisodeState, action: ActionParsed) -> Event:
    """What a valid tool action asks for: the tool call, or first a rewrite of its query."""
    request = rag_request(action.tool_input or "") if action.tool == LOCAL_RAG else None
    if request is None or not state.run.episode.rag_rewrite_query:
        return tool_request(ctx, action, action.tool_input or "")
    library, query = request
    return _helper_call(
        ctx, state, action, RAG_REWRITER, purpose="rag_rewrite", messages=rewrite_messages(query, library)
    )


async def search_after_rewrite(event: ModelResponded | ModelCallFailed, ctx: HandlerContext) -> Sequence[Event]:
    """The rewrite is in (or failed): search with it, or with the model's own query."""
    if event.role != RAG_REWRITER:
        return []
    state = episode_state(ctx.history, event.episode)
    record = step_record(state, event.step)
    if record is None or record.action is None or state.ended is not None or state.graded is not None:
        return []
    body = record.action.tool_input or ""
    rewritten = clean_rewrite(event.text) if isinstance(event, ModelResponded) else ""
    request = rag_request(body)
    if rewritten and request is not None:
        payload = json.loads(body)
        payload["query"] = rewritten
        body = json.dumps(payload, ensure_ascii=False)
    return [tool_request(ctx, record.action, body)]


def summary_request(ctx: HandlerContext, state: EpisodeState, result: ToolReturned) -> ModelCallRequested | None:
    """The summary call a successful local_rag result needs, or None when it goes straight on."""
    if result.tool != LOCAL_RAG or result.score <= 0 or not state.run.episode.rag_summarize:
        return None
    record = step_record(state, result.step)
    hits = _result_text(result.result)
    if record is None or record.action is None or not hits:
        return None
    request = rag_request(record.action.tool_input or "")
    question = request[1] if request else (record.action.tool_input or "")
    return _helper_call(
        ctx, state, record.action, RAG_SUMMARIZER, purpose="rag_summarize",
        messages=summary_messages(question, hits),
    )


def is_summary_result(event: ModelResponded | ModelCallFailed) -> bool:
    """Whether ``event`` ends a summary call (after which the episode takes its next step)."""
    return event.role == RAG_SUMMARIZER


def tool_request(ctx: HandlerContext, action: ActionParsed, body: str) -> ToolCallRequested:
    """The tool call of ``action`` with ``body`` as its input."""
    return ctx.new(
        ToolCallRequested, "tool",
        call_id=ctx.new_id("tool-call"), role=action.role, step=action.step,
        tool=action.tool or "", input=body, branch=action.branch, episode=action.episode,
    )


def rag_request(body: str) -> tuple[str, str] | None:
    """(library, query) of a JSON local_rag body, or None when the tool should judge it as is."""
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(payload, dict):
        return None
    library, query = payload.get("repo_name"), payload.get("query")
    if not isinstance(library, str) or not isinstance(query, str) or not library.strip() or not query.strip():
        return None
    return library.strip(), query.strip()


def _helper_call(
    ctx: HandlerContext, state: EpisodeState, action: ActionParsed, role: str, *, purpose: str,
    messages: list[Any],
) -> ModelCallRequested:
    # A branch's helper calls use its models, as its policy calls do.
    model = state.run.model_of_call(role, action.branch)
    return ctx.new(
        ModelCallRequested, f"{purpose}-{action.step}",
        call_id=ctx.new_id(f"{purpose}-{action.step}"), role=role, step=action.step, messages=messages,
        model=model.model, params=sampling_params(model), purpose=purpose,
        branch=action.branch, episode=action.episode,
    )


def _result_text(result_json: str) -> str:
    try:
        payload = json.loads(result_json)
    except ValueError:
        return ""
    text = payload.get("result") if isinstance(payload, dict) else None
    return text.strip() if isinstance(text, str) else ""
