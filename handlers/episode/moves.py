"""What follows a policy reply under each episode protocol, read from the episode's state.

Everything here is a pure function of the episode state, so the decider that asks for the
next call and the effector that grades agree on where an episode ends. The protocols
themselves are described in :mod:`handlers.episode.protocol`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from handlers.episode.protocol import (
    ANSWER_REASK,
    ANSWER_RETRY,
    APOLLO,
    ENV_TOOLS,
    FALLBACK_ANSWER,
    REFERENCE_TEST,
    answer_tries,
    env_tool_calls,
    has_answer_tags,
    protocol_of,
)
from handlers.projections.episode import EpisodeState, StepRecord
from handlers.run_settings import RunSettings


@dataclass(frozen=True)
class Move:
    """What follows the latest policy reply of an episode under a reference protocol."""

    kind: Literal["end", "tool", "next", "reask", "retry"]
    step: int
    """The step the next call belongs to (for ``end``: the step that ended it)."""
    done_reason: str = ""
    tool: str | None = None
    tool_input: str = ""


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
