"""The state of one episode, folded from the run's events.

One code path serves live deciding and replay: deciders call :func:`episode_state`
on the history the dispatcher hands them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from events.base import Event
from events.episode import AnswerGraded, EpisodeEnded
from events.model import ChatMessage, ModelCallFailed, ModelCallRequested, ModelResponded
from events.run import ProblemSubmitted, RunStarted
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned
from handlers.episode.observations import tool_failure, tool_response, with_rag_hint
from handlers.episode.rag_prompts import clean_summary
from handlers.roles import HELPER_ROLES, RAG_SUMMARIZER


@dataclass(frozen=True)
class StepRecord:
    """One model turn and what followed it."""

    step: int
    call_id: str
    prompt: tuple[ChatMessage, ...] = ()
    response: str | None = None
    prompt_token_ids: list[int] | None = None
    response_token_ids: list[int] | None = None
    response_logprobs: list[float] | None = None
    action: ActionParsed | None = None
    observation: str | None = None
    tool: str | None = None
    tool_succeeded: bool | None = None


@dataclass(frozen=True)
class EpisodeState:
    """Everything deciders need about one episode (``role``/``episode`` of a run)."""

    episode: str = "main"
    problem: ProblemSubmitted | None = None
    settings: dict[str, Any] = field(default_factory=dict)
    steps: tuple[StepRecord, ...] = ()
    model: str = ""
    failure: ModelCallFailed | None = None
    graded: AnswerGraded | None = None
    ended: EpisodeEnded | None = None

    @property
    def step(self) -> int:
        return len(self.steps)

    @property
    def invalid_turns(self) -> int:
        return sum(1 for s in self.steps if s.action is not None and not s.action.valid)

    def last(self) -> StepRecord | None:
        return self.steps[-1] if self.steps else None


def evolve(state: EpisodeState, event: Event) -> EpisodeState:
    """Fold one event; events of other episodes and unknown types leave state unchanged."""
    match event:
        case ProblemSubmitted():
            return replace(state, problem=event)
        case RunStarted():
            return replace(state, settings=event.settings)
    if getattr(event, "episode", None) != state.episode:
        return state
    match event:
        case ModelCallRequested() | ModelCallFailed() if event.role in HELPER_ROLES:
            return state  # a helper call serves a step; it is not one
        case ModelResponded() if event.role in HELPER_ROLES:
            return _helper_reply(state, event)
        case ModelCallRequested():
            return _upsert(state, StepRecord(event.step, event.call_id, tuple(event.messages)), model=event.model)
        case ModelResponded():
            return _update(state, event.call_id, response=event.text,
                           prompt_token_ids=event.prompt_token_ids, response_token_ids=event.token_ids,
                           response_logprobs=event.logprobs)
        case ModelCallFailed():
            return replace(state, failure=event)
        case ActionParsed():
            observation = None if event.valid else event.error
            return _update(state, event.call_id, action=event, observation=observation)
        case ToolCallRequested():
            return _update_step(state, event.step, tool=event.tool)
        case ToolReturned():
            result = event.result
            if event.tool == "python_code" and event.score <= 0 and _rag_enabled(state):
                result = with_rag_hint(result)
            return _update_step(state, event.step, observation=tool_response(result), tool_succeeded=event.score > 0)
        case ToolFailed():
            return _update_step(state, event.step, observation=tool_failure(event.error), tool_succeeded=False)
        case AnswerGraded():
            return replace(state, graded=event)
        case EpisodeEnded():
            return replace(state, ended=event)
    return state


def episode_state(history: Iterable[Event], episode: str = "main") -> EpisodeState:
    """Fold a whole history into the state of one episode."""
    state = EpisodeState(episode=episode)
    for event in history:
        state = evolve(state, event)
    return state


def step_record(state: EpisodeState, step: int) -> StepRecord | None:
    """The record of ``step``, if the episode has one."""
    return next((s for s in reversed(state.steps) if s.step == step), None)


def _helper_reply(state: EpisodeState, reply: ModelResponded) -> EpisodeState:
    """A non-empty retrieval summary replaces the raw hits as the step's observation."""
    if reply.role != RAG_SUMMARIZER:
        return state
    summary = clean_summary(reply.text)
    if not summary:
        return state
    result = json.dumps({"result": summary, "status": "success", "summarised": True}, ensure_ascii=False)
    return _update_step(state, reply.step, observation=tool_response(result))


def _rag_enabled(state: EpisodeState) -> bool:
    return bool(state.settings.get("episode", {}).get("enable_local_rag"))


def replace(obj: Any, **changes: Any) -> Any:
    """A copy of a frozen dataclass with some fields changed.

    Same result as ``dataclasses.replace`` without re-running ``__init__``: folds call
    this for every event, and rebuild speed is dominated by it.
    """
    clone = object.__new__(type(obj))
    clone.__dict__.update(obj.__dict__)
    clone.__dict__.update(changes)
    return clone


def _upsert(state: EpisodeState, record: StepRecord, *, model: str) -> EpisodeState:
    steps = [s for s in state.steps if s.step != record.step]
    return replace(state, steps=(*steps, record), model=model)


def _update(state: EpisodeState, call_id: str, **changes: Any) -> EpisodeState:
    steps = tuple(replace(s, **changes) if s.call_id == call_id else s for s in state.steps)
    return replace(state, steps=steps)


def _update_step(state: EpisodeState, step: int, **changes: Any) -> EpisodeState:
    steps = tuple(replace(s, **changes) if s.step == step else s for s in state.steps)
    return replace(state, steps=steps)
