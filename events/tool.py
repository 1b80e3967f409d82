"""Actions parsed from model replies, and the tool calls they lead to."""

from __future__ import annotations

from typing import Literal

from events.base import Event

ActionKind = Literal["answer", "tool", "report", "empty"]


class ActionParsed(Event, frozen=True, kw_only=True, tag="action.parsed"):
    """A model reply was projected into one action and checked for validity."""

    call_id: str
    role: str
    step: int
    kind: ActionKind
    action: str
    """The projected action text (e.g. ``<python_code>...</python_code>``), empty if none."""
    valid: bool
    tool: str | None = None
    tool_input: str | None = None
    answer: str | None = None
    """Body of the ``<answer>`` (or ``<report>``) block."""
    final_answer: str | None = None
    """The answer that gets graded (e.g. the last ``\\boxed{}`` of the answer block)."""
    error: str | None = None
    """Why the action is invalid, in words the model is shown."""
    branch: str | None = None
    episode: str = "main"
    """Which episode of the run (evolve runs have several: rounds, verifiers)."""


class ToolCallRequested(Event, frozen=True, kw_only=True, tag="tool.call_requested"):
    """A decider asked for one tool call."""

    call_id: str
    role: str
    step: int
    tool: str
    input: str
    """The raw body of the tool tag, exactly as the model wrote it."""
    branch: str | None = None
    episode: str = "main"
    """Which episode of the run (evolve runs have several: rounds, verifiers)."""


class ToolReturned(Event, frozen=True, kw_only=True, tag="tool.returned"):
    """A tool ran; ``result`` is the JSON text the model sees in ``<tool_response>``."""

    call_id: str
    role: str
    step: int
    tool: str
    result: str
    score: float
    """1.0 when the tool succeeded, 0.0 otherwise (reference semantics)."""
    latency_ms: float = 0.0
    branch: str | None = None
    episode: str = "main"
    """Which episode of the run (evolve runs have several: rounds, verifiers)."""


class ToolFailed(Event, frozen=True, kw_only=True, tag="tool.failed"):
    """A tool could not run at all (unknown tool, bad input, infrastructure error)."""

    call_id: str
    role: str
    step: int
    tool: str
    error: str
    kind: str = "error"
    branch: str | None = None
    episode: str = "main"
    """Which episode of the run (evolve runs have several: rounds, verifiers)."""
