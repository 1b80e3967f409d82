"""Marks for model calls that did not go plainly: a reply cut at its token limit, a call retried.

Both change what a number means (a cut reply is often an unanswered one; a retried call
took longer and hit a struggling server), so every timeline shows them, not only ``--json``.
"""

from __future__ import annotations

from events.base import Event
from events.model import ModelCallFailed, ModelResponded

PLAIN_FINISHES = (None, "stop", "tool_calls", "eos")
"""Finish reasons of a reply the model ended itself."""


def call_marks(event: Event) -> list[str]:
    """Short upper-case marks (``CUT OFF at the token limit, 1024 tokens``, ``RETRIED x1 after timeout``); none
    for a plain call."""
    marks: list[str] = []
    if isinstance(event, ModelResponded):
        if event.finish_reason == "length":
            # The server stopped it at a token limit: the request's max_tokens, or the context
            # left after the prompt (the reply does not say which), so the mark names neither.
            tokens = event.usage.completion_tokens if event.usage is not None else 0
            marks.append("CUT OFF at the token limit" + (f", {tokens} tokens" if tokens else ""))
        elif event.finish_reason not in PLAIN_FINISHES:
            marks.append(f"ENDED by the server: finish_reason {event.finish_reason}")
        if event.attempts > 1:
            marks.append(_retried(event.attempts, event.retried))
    elif isinstance(event, ModelCallFailed) and event.attempts > 1:
        marks.append(f"GAVE UP after {event.attempts} attempts")
    return marks


def _retried(attempts: int, reasons: list[str]) -> str:
    mark = f"RETRIED x{attempts - 1}"
    if reasons:  # replies recorded before reasons were kept say only how often
        mark += " after " + ", ".join(reasons)
    return mark
