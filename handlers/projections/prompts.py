"""Whole prompts of a run's model calls, from a history whose requests may record deltas.

A ``model.call_requested`` read from the log may give its prompt only as a
:class:`events.model.PromptDelta` against an earlier call of the same episode
(:mod:`handlers.episode.prompt_record`). The episode projection resolves steps as it folds;
this module serves readers that need any request's prompt: the model-call effector, the
timeline, ``apollo show``.
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

from events.base import Event
from events.model import ChatMessage, ModelCallRequested
from events.text_delta import DeltaError, resolve_messages


def whole_prompt(request: ModelCallRequested, earlier: dict[tuple[str, str], list[ChatMessage]]) -> list[ChatMessage]:
    """``request``'s prompt, given the whole prompts of the calls before it by ``(episode, call_id)``.

    Raises:
        DeltaError: the delta names a call not among ``earlier``, or does not fit it.
    """
    delta = request.prompt_delta
    if delta is None or request.messages:
        return list(request.messages)
    base = earlier.get((request.episode, delta.base_call))
    if base is None:
        msg = (f"model.call_requested {request.call_id} gives its prompt as changes from call "
               f"{delta.base_call}, which is not an earlier call of episode {request.episode!r}")
        raise DeltaError(msg)
    return resolve_messages(base, delta)


def whole_prompts(history: Iterable[Event]) -> dict[str, list[ChatMessage]]:
    """Every request's whole prompt by event id; a request whose delta does not resolve is left out."""
    by_call: dict[tuple[str, str], list[ChatMessage]] = {}
    out: dict[str, list[ChatMessage]] = {}
    for event in history:
        if type(event) is not ModelCallRequested:
            continue
        try:
            prompt = whole_prompt(event, by_call)
        except DeltaError:
            continue
        by_call[(event.episode, event.call_id)] = prompt
        out[event.event_id] = prompt
    return out


def resolved_prompt(history: Iterable[Event], request: ModelCallRequested) -> list[ChatMessage]:
    """``request``'s whole prompt, resolved through the requests before it in ``history``.

    Raises:
        DeltaError: its delta (or one it builds on) does not resolve.
    """
    if request.prompt_delta is None or request.messages:
        return list(request.messages)
    by_call: dict[tuple[str, str], list[ChatMessage]] = {}
    for event in history:
        if type(event) is not ModelCallRequested:
            continue
        if event.event_id == request.event_id:
            break
        if event.episode == request.episode:
            try:
                by_call[(event.episode, event.call_id)] = whole_prompt(event, by_call)
            except DeltaError:
                continue  # only a base the request names matters; whole_prompt says if it is missing
    return whole_prompt(request, by_call)


def with_whole_prompts(history: list[Event]) -> list[Event]:
    """``history`` with every request's prompt whole (its delta kept), for readers that show them."""
    if not any(type(e) is ModelCallRequested and e.prompt_delta is not None and not e.messages for e in history):
        return history
    prompts = whole_prompts(history)
    return [
        msgspec.structs.replace(e, messages=prompts[e.event_id])
        if type(e) is ModelCallRequested and not e.messages and e.event_id in prompts else e
        for e in history
    ]
