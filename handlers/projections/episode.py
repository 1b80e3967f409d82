"""The state of one episode, folded from the run's events.

One code path serves live deciding and replay: deciders call :func:`episode_state`
on the history the dispatcher hands them.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any

import msgspec

from events.base import Event
from events.episode import AnswerGraded, EpisodeEnded
from events.model import ChatMessage, ModelCallFailed, ModelCallRequested, ModelResponded
from events.run import ProblemSubmitted, RunStarted
from events.text_delta import DeltaError, resolve_messages
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned
from handlers.episode.observations import tool_failure, tool_response, with_rag_hint
from handlers.episode.protocol import ANSWER_REASK, ANSWER_RETRY, REFERENCE_EVOLVE
from handlers.episode.rag_prompts import clean_summary
from handlers.roles import HELPER_ROLES, RAG_SUMMARIZER
from handlers.run_settings import RunSettings, run_settings_of


class StepRecord(msgspec.Struct, frozen=True, gc=False):
    """One model turn and what followed it.

    States are msgspec Structs: a fold copies one or two of them per event, and
    ``msgspec.structs.replace`` does that in C (a rebuild is mostly these copies). They
    hold only events, strings, numbers and tuples of those, never themselves, so they need
    no cycle collection (``gc=False``) and a bulk rebuild leaves the collector nothing to walk.
    """

    step: int
    call_id: str
    prompt: tuple[ChatMessage, ...] = ()
    response: str | None = None
    prompt_token_ids: list[int] | None = None
    response_token_ids: list[int] | None = None
    response_logprobs: list[float] | None = None
    policy_version: int | None = None
    action: ActionParsed | None = None
    observation: str | None = None
    tool: str | None = None
    tool_succeeded: bool | None = None
    reasks: int = 0
    """Force-answer asks that replaced this step's reply (reference_evolve protocol)."""


class RetryRecord(msgspec.Struct, frozen=True, gc=False):
    """One after-loop answer retry (reference_evolve protocol): recorded, never a step."""

    call_id: str
    response: str | None = None


@dataclass(frozen=True)
class RecordedSettings:
    """A run's recorded settings as the fold met them in ``run.started``, decoded on first
    use and kept: every state folded on from that event shares this one object."""

    recorded: Mapping[str, Any] = field(default_factory=dict)

    @cached_property
    def typed(self) -> RunSettings:
        """The typed settings (``RunSettingsError`` if garbage: raised on each use, never kept)."""
        return run_settings_of(self.recorded)


class EpisodeState(msgspec.Struct, frozen=True, gc=False):
    """Everything deciders need about one episode (``role``/``episode`` of a run)."""

    episode: str = "main"
    problem: ProblemSubmitted | None = None
    settings: RecordedSettings = msgspec.field(default_factory=RecordedSettings)
    steps: tuple[StepRecord, ...] = ()
    model: str = ""
    failure: ModelCallFailed | None = None
    graded: AnswerGraded | None = None
    ended: EpisodeEnded | None = None
    retries: tuple[RetryRecord, ...] = ()
    prompt_deltas: bool = False
    """The run records each step's prompt as its changes from the step before (``RunStarted.prompts``)."""

    @property
    def step(self) -> int:
        return len(self.steps)

    @property
    def invalid_turns(self) -> int:
        return sum(1 for s in self.steps if s.action is not None and not s.action.valid)

    def last(self) -> StepRecord | None:
        return self.steps[-1] if self.steps else None

    @property
    def run(self) -> RunSettings:
        """The recorded run settings, typed (decoded once per fold; ``RunSettingsError`` if garbage)."""
        return self.settings.typed


def evolve(state: EpisodeState, event: Event) -> EpisodeState:
    """Fold one event; events of other episodes and unknown types leave state unchanged."""
    fold = _FOLDS.get(type(event))
    if fold is None:
        return state
    return fold(state, event)


# One fold per event type, looked up by exact type: rebuild speed is dominated by this
# function, and a dict lookup beats trying a dozen class patterns in turn.


def _problem(state: EpisodeState, event: ProblemSubmitted) -> EpisodeState:
    return replace(state, problem=event)


def _started(state: EpisodeState, event: RunStarted) -> EpisodeState:
    return replace(state, settings=RecordedSettings(event.settings), prompt_deltas=event.prompts == "delta")


def _call_requested(state: EpisodeState, event: ModelCallRequested) -> EpisodeState:
    if event.episode != state.episode or event.role in HELPER_ROLES:
        return state  # a helper call serves a step; it is not one
    if event.purpose == ANSWER_RETRY:
        return replace(state, retries=(*state.retries, RetryRecord(event.call_id)))
    record = StepRecord(event.step, event.call_id, _prompt_of(state, event))
    if event.purpose == ANSWER_REASK:
        replaced = step_record(state, event.step)
        record = replace(record, reasks=(replaced.reasks if replaced else 0) + 1)
    return _upsert(state, record, model=event.model)


def _responded(state: EpisodeState, event: ModelResponded) -> EpisodeState:
    if event.episode != state.episode:
        return state
    if event.role in HELPER_ROLES:
        return _helper_reply(state, event)
    if event.purpose == ANSWER_RETRY:
        return _retry_reply(state, event)
    return _update(state, event.call_id, response=event.text, prompt_token_ids=event.prompt_token_ids,
                   response_token_ids=event.token_ids, response_logprobs=event.logprobs,
                   policy_version=event.policy_version)


def _call_failed(state: EpisodeState, event: ModelCallFailed) -> EpisodeState:
    if event.episode != state.episode or event.role in HELPER_ROLES:
        return state
    return replace(state, failure=event)


def _action(state: EpisodeState, event: ActionParsed) -> EpisodeState:
    if event.episode != state.episode:
        return state
    return _update(state, event.call_id, action=event, observation=None if event.valid else event.error)


def _tool_requested(state: EpisodeState, event: ToolCallRequested) -> EpisodeState:
    if event.episode != state.episode:
        return state
    return _update_step(state, event.step, tool=event.tool)


def _tool_returned(state: EpisodeState, event: ToolReturned) -> EpisodeState:
    if event.episode != state.episode:
        return state
    result = event.result
    if event.tool == "python_code" and event.score <= 0 and _rag_enabled(state, event.role):
        result = with_rag_hint(result)
    return _update_step(state, event.step, observation=tool_response(result), tool_succeeded=event.score > 0)


def _tool_failed(state: EpisodeState, event: ToolFailed) -> EpisodeState:
    if event.episode != state.episode:
        return state
    return _update_step(state, event.step, observation=tool_failure(event.error), tool_succeeded=False)


def _graded(state: EpisodeState, event: AnswerGraded) -> EpisodeState:
    return state if event.episode != state.episode else replace(state, graded=event)


def _ended(state: EpisodeState, event: EpisodeEnded) -> EpisodeState:
    return state if event.episode != state.episode else replace(state, ended=event)


_FOLDS: dict[type, Callable[[EpisodeState, Any], EpisodeState]] = {
    ProblemSubmitted: _problem,
    RunStarted: _started,
    ModelCallRequested: _call_requested,
    ModelResponded: _responded,
    ModelCallFailed: _call_failed,
    ActionParsed: _action,
    ToolCallRequested: _tool_requested,
    ToolReturned: _tool_returned,
    ToolFailed: _tool_failed,
    AnswerGraded: _graded,
    EpisodeEnded: _ended,
}


EVENT_TYPES: frozenset[type] = frozenset(_FOLDS)
"""The event types :func:`evolve` folds; it returns the state unchanged on any other."""


def episode_state(history: Iterable[Event], episode: str = "main") -> EpisodeState:
    """Fold a whole history into the state of one episode.

    Deciders call this on every event of a run with the run's history so far, so the
    state last folded for the run and episode is kept (:data:`FOLDS_KEPT` of them): when
    the new history starts with the same event objects up to where that fold stopped, only
    the events after it are folded. Events and states are immutable, so a reused state is
    the one a full fold would give.
    """
    events = history if isinstance(history, list | tuple) else list(history)
    if not events:
        return EpisodeState(episode=episode)
    key = (id(events[0]), episode)
    kept = _FOLDED.get(key)
    start, state = 0, EpisodeState(episode=episode)
    if kept is not None:
        first, last, count, folded = kept
        if first is events[0] and count <= len(events) and events[count - 1] is last:
            start, state = count, folded
    for event in events[start:]:
        state = evolve(state, event)
    _FOLDED[key] = (events[0], events[-1], len(events), state)
    _FOLDED.move_to_end(key)
    if len(_FOLDED) > FOLDS_KEPT:
        _FOLDED.popitem(last=False)
    return state


FOLDS_KEPT = 512
"""Folds kept for reuse: one per episode in flight on a worker (a dispatcher runs 64 at once by
default); each holds its episode's resolved prompts, so the bound also bounds their memory."""
_FOLDED: OrderedDict[tuple[int, str], tuple[Event, Event, int, EpisodeState]] = OrderedDict()


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


def _rag_enabled(state: EpisodeState, role: str) -> bool:
    """Whether the RAG hint applies: a verifier's episode has its own switch, and the
    reference's evolving env (protocol ``reference_evolve``) never hints."""
    run = state.run
    if run.episode.protocol == REFERENCE_EVOLVE:
        return False
    return run.evolve.verifier_episode.enable_local_rag if role == "verifier" else run.episode.enable_local_rag


def _retry_reply(state: EpisodeState, reply: ModelResponded) -> EpisodeState:
    retries = tuple(
        replace(r, response=reply.text) if r.call_id == reply.call_id else r for r in state.retries
    )
    return replace(state, retries=retries)


replace = msgspec.structs.replace
"""A copy of a state with some fields changed (in C: folds call it for every event)."""


def _prompt_of(state: EpisodeState, event: ModelCallRequested) -> tuple[ChatMessage, ...]:
    """The request's prompt whole: its messages, or its delta applied to the step it names.

    A delta that does not resolve (its base is no step of this episode, or a range falls
    outside it: a corrupt or foreign record) leaves the step's prompt empty rather than
    failing every later decision of the run: the model-call effector resolves the same
    request, fails the call as ``bad_response`` naming why, and the episode ends on that.
    """
    delta = event.prompt_delta
    if delta is None or event.messages:  # the decider's own output holds it whole too
        return tuple(event.messages)
    base = next((s for s in reversed(state.steps) if s.call_id == delta.base_call), None)
    if base is None:
        return ()
    try:
        return tuple(resolve_messages(base.prompt, delta))
    except DeltaError:
        return ()


def _upsert(state: EpisodeState, record: StepRecord, *, model: str) -> EpisodeState:
    kept = [s for s in state.steps if s.step != record.step]
    return replace(state, steps=(*kept, record), model=model)


def _update(state: EpisodeState, call_id: str, **changes: Any) -> EpisodeState:
    """Change every step of ``call_id`` (there is one; the last step is the usual one)."""
    steps = list(state.steps)
    for index, record in enumerate(steps):
        if record.call_id == call_id:
            steps[index] = replace(record, **changes)
    return replace(state, steps=tuple(steps))


def _update_step(state: EpisodeState, step: int, **changes: Any) -> EpisodeState:
    steps = list(state.steps)
    for index, record in enumerate(steps):
        if record.step == step:
            steps[index] = replace(record, **changes)
    return replace(state, steps=tuple(steps))
