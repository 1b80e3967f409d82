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

Everything here is a pure function of the episode state, so the decider that asks
for the next call and the effector that grades agree on where an episode ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal, get_args

if TYPE_CHECKING:
    from handlers.projections.episode import EpisodeState, StepRecord
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


@dataclass(frozen=True)
class Move:
    """What follows the latest policy reply of an episode under a reference protocol."""

    kind: Literal["end", "tool", "next", "reask", "retry"]
    step: int
    """The step the next call belongs to (for ``end``: the step that ended it)."""
    done_reason: str = ""
    tool: str | None = None
    tool_input: str = ""


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


def stepped_text(record: StepRecord) -> str:
    """The text the reference stepped for this turn (its fallback when the asks failed)."""
    response = record.response or ""
    action = record.action
    if action is not None and action.action == FALLBACK_ANSWER and not has_answer_tags(response):
        return FALLBACK_ANSWER
    return response


def next_move(state: EpisodeState) -> Move | None:
    """What follows the latest reply under ``state``'s reference protocol (``None``: wait)."""
    last = state.last()
    if last is None or last.response is None or last.action is None:
        return None
    settings = state.run
    tries = answer_tries(settings)
    if state.retries:
        newest = state.retries[-1]
        if newest.response is None:
            return None
        if has_answer_tags(newest.response) or len(state.retries) >= tries:
            return _step_move(last, settings)
        return Move("retry", last.step + 1)
    move = _step_move(last, settings)
    if move.kind == "end" and tries and not has_answer_tags(stepped_text(last)):
        return Move("retry", last.step + 1)
    return move


def _step_move(last: StepRecord, settings: RunSettings) -> Move:
    if protocol_of(settings) == REFERENCE_TEST:
        return _test_env_move(last, settings.episode.max_steps)
    return _evolve_env_move(last, settings.episode.max_steps, answer_tries(settings))


def _test_env_move(last: StepRecord, max_steps: int) -> Move:
    """Spec §1.3: no tool call, or the budget, ends the episode; else the first tool runs."""
    text = last.response or ""
    calls = env_tool_calls(text)
    if not calls:
        return Move("end", last.step, "answer" if text.strip() else "empty_action")
    if last.step >= max_steps:
        return Move("end", last.step, "max_steps")
    tool, body = calls[0]
    return Move("tool", last.step, tool=tool, tool_input=body)


def _evolve_env_move(last: StepRecord, max_steps: int, tries: int) -> Move:
    """Spec §1.4/§4.3/§6.2: force-answer on the last step, then the projected action decides."""
    action = last.action
    if action is None:
        return Move("next", last.step + 1)  # unreachable: next_move checks it
    if last.step >= max_steps and last.reasks < tries and not has_answer_tags(stepped_text(last)):
        return Move("reask", last.step)
    # The manager's forced ends (empty projection, report) override the env's reason.
    if action.kind == "empty":
        return Move("end", last.step, "empty_action")
    if action.kind == "report":
        return Move("end", last.step, "report")
    if last.step >= max_steps:
        return Move("end", last.step, "max_steps")
    if action.kind == "answer":
        return Move("end", last.step, "answer")
    if action.tool in ENV_TOOLS:
        return Move("tool", last.step, tool=action.tool, tool_input=action.tool_input or "")
    return Move("next", last.step + 1)  # a tag the env does not run: nothing comes back


def graded_text(state: EpisodeState) -> str:
    """The reference's reward text: every stepped reply, once more per tool it ran."""
    steps = sorted((s for s in state.steps if s.response is not None), key=lambda s: s.step)
    test_env = protocol_of(state.run) == REFERENCE_TEST
    parts = []
    for index, record in enumerate(steps):
        text = stepped_text(record)
        ran = 0 if index == len(steps) - 1 else _tools_run(record, text, test_env=test_env)
        parts.append(text * (1 + ran))
    return "".join(parts)


def _tools_run(record: StepRecord, text: str, *, test_env: bool) -> int:
    if test_env:
        return len(env_tool_calls(text))
    action = record.action
    return int(action is not None and action.kind == "tool" and action.tool in ENV_TOOLS)


def call_purpose(state: EpisodeState, step: int) -> str:
    """Why the policy is asked for ``step`` now (decides the prompt)."""
    settings = state.run
    protocol = protocol_of(settings)
    max_steps = settings.episode.max_steps
    if protocol == APOLLO:
        force = settings.episode.force_answer
        return "force_answer" if force and step >= max_steps > 1 else "act"
    if protocol == REFERENCE_TEST:
        return "act"
    if state.retries:
        return ANSWER_RETRY
    last = state.last()
    if last is not None and last.step == step and last.response is not None:
        return ANSWER_REASK
    move = next_move(state)
    return ANSWER_RETRY if move is not None and move.kind == "retry" else "act"
