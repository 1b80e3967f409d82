"""How a step's prompt is recorded: whole, or as its changes from the episode's last step.

Runs started with ``prompts: delta`` (every run since; see ``RunStarted.prompts``) record a
step's prompt as a :class:`events.model.PromptDelta` against the latest step of the same
episode, so a run's bytes grow linearly with its turns. Earlier runs record it whole, and
replay re-decides them that way. The event keeps the whole prompt in memory too; only its
wire form leaves it out (:mod:`events.wire_form`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from events.model import ChatMessage, PromptDelta
from events.text_delta import delta_messages
from handlers.episode.protocol import ANSWER_RETRY
from handlers.projections.episode import EpisodeState


def prompt_fields(state: EpisodeState, messages: Sequence[ChatMessage], purpose: str) -> dict[str, Any]:
    """``messages`` and, where the run records deltas, the ``prompt_delta`` that rebuilds them.

    The base is the episode's latest step, the one the episode projection resolves it from
    (an answer retry is no step, so it is always recorded whole).
    """
    fields: dict[str, Any] = {"messages": list(messages)}
    base = state.last()
    if not state.prompt_deltas or purpose == ANSWER_RETRY or base is None or not base.prompt:
        return fields
    delta = delta_messages(base.prompt, messages)
    if delta is not None:
        fields["prompt_delta"] = PromptDelta(base_call=base.call_id, kept=delta.kept, messages=delta.messages)
    return fields
