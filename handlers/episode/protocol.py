"""Episode protocols: when an episode ends and what text is graded (``episode.protocol``).

``apollo`` (default): one action per turn; an invalid or tag-less reply is answered
with an error observation and another turn; a valid ``<answer>`` ends the episode and
its final answer alone is graded.

``reference_test``: the reference's training/test environment (spec §1.3, §10.6).
Tool calls are read from the raw reply (``python_code``, ``informalmath_verify``,
``local_rag`` in that order, first block of each); a reply without one ends the
episode, and so does the step budget, with no tool run on the ending step. Validity
is recorded but changes nothing. The grade is computed on the concatenation of the
raw replies, each repeated once more per tool it ran (the reference's chat history
carries the reply on every tool observation too).

``reference_evolve``: the reference's evolving environment and loop (spec §1.4, §2,
§4.3, §6.2). The projected action decides: nothing parsed ends with ``empty_action``,
a report with ``report``, the budget with ``max_steps``, any answer (valid or not)
with ``answer``; otherwise the projected tool runs. On the last step a reply without
answer tags is asked again with the answer-only prompt, up to five times, then the
reference's fallback answer stands in. An episode that ends early without answer
tags gets the after-loop retry (up to five answer-only asks), recorded but, as in
the reference's single-model loop, never graded. The graded text is built as for
``reference_test``.

The names and rules live here; what follows a reply under each protocol, read from the
episode's state, is in :mod:`handlers.episode.moves`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Final, Literal, get_args

if TYPE_CHECKING:
    from handlers.run_settings import RunSettings

ProtocolName = Literal["apollo", "reference_test", "reference_evolve"]
PROTOCOLS: Final[tuple[str, ...]] = get_args(ProtocolName)
APOLLO: Final = "apollo"
REFERENCE_TEST: Final = "reference_test"
REFERENCE_EVOLVE: Final = "reference_evolve"

ENV_TOOLS: Final[tuple[str, ...]] = ("python_code", "informalmath_verify", "local_rag")
"""Tools the reference's environment runs, in the order it looks for them."""
ANSWER_TRIES: Final = 5
"""Answer-only asks of the reference's force-answer and after-loop retry."""
FALLBACK_ANSWER: Final = "<answer>Failed to generate answer.\nAnswer: \\boxed{}</answer>"
"""What the reference steps when five force-answer asks brought no answer tags."""
ANSWER_REASK: Final = "answer_reask"
"""Purpose of a force-answer ask: it replaces the last step's reply."""
ANSWER_RETRY: Final = "answer_retry"
"""Purpose of an after-loop retry: recorded, never a step, never graded."""

_IMPLIED_GRADERS: Final[Mapping[str, str]] = {
    REFERENCE_TEST: "reference",
    REFERENCE_EVOLVE: "reference_evolve",
}
WHOLE_TEXT_GRADERS: Final = frozenset(_IMPLIED_GRADERS.values())
"""Graders that read the whole trajectory text and extract the answer themselves."""

def protocol_of(run: RunSettings) -> str:
    """The run's protocol (``apollo`` when it recorded none)."""
    return run.episode.protocol or APOLLO


def implied_grader(protocol: str | None) -> str | None:
    """The grader a protocol implies (``None``: the domain's)."""
    return _IMPLIED_GRADERS.get(protocol or APOLLO)


def single_turn(run: RunSettings) -> bool:
    """A one-step episode: one prompt without tools, the reply is the answer."""
    return run.episode.max_steps == 1


def answer_tries(run: RunSettings) -> int:
    """Force-answer asks per episode end (only the evolving protocol re-asks)."""
    if protocol_of(run) != REFERENCE_EVOLVE or not run.episode.force_answer:
        return 0
    return ANSWER_TRIES


def has_answer_tags(text: str) -> bool:
    """The reference's test for an answer: both literal tags somewhere in the text."""
    return "<answer>" in text and "</answer>" in text


def env_tool_calls(text: str) -> list[tuple[str, str]]:
    """(tool, stripped body) of every tool the reference's training env would run.

    For each tool in :data:`ENV_TOOLS` order whose open and close tags both occur,
    the first ``<tool>...</tool>`` block (case-sensitive, like its regex).
    """
    calls = []
    for tool in ENV_TOOLS:
        opened = text.find(f"<{tool}>")
        if opened == -1:
            continue
        body_start = opened + len(tool) + 2
        # The first close after the first open is the regex's first match; a close
        # only before it means no match (no later open has a close after it either).
        closed = text.find(f"</{tool}>", body_start)
        if closed != -1:
            calls.append((tool, text[body_start:closed].strip()))
    return calls
