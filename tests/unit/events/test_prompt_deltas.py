"""Prompts recorded by their changes rebuild exactly, stay small, and garbage deltas fail loudly."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from events import DecodeError, decode, encode
from events.episode import TrajectorySealed, Turn
from events.model import ChatMessage, MessageDelta, ModelCallRequested, PromptDelta
from events.text_delta import DeltaError, apply_pieces, delta_messages, resolve_messages, text_pieces
from handlers.projections.prompts import resolved_prompt, whole_prompts, with_whole_prompts

AT = datetime(2026, 1, 1, tzinfo=UTC)
lines = st.lists(st.text(st.characters(codec="utf-8"), max_size=40), max_size=30).map("\n".join)


@settings(max_examples=300, deadline=None)
@given(base=lines, new=lines)
def test_any_text_rebuilds_exactly_from_its_pieces(base: str, new: str) -> None:
    """Whatever the two texts (unicode, empty, CRLF, no newline at the end), the pieces give ``new`` back."""
    assert apply_pieces(base, text_pieces(base, new)) == new


@settings(max_examples=200, deadline=None)
@given(base=st.lists(lines, max_size=3), new=st.lists(lines, min_size=1, max_size=3))
def test_any_prompt_rebuilds_from_its_deltas(base: list[str], new: list[str]) -> None:
    """Message lists of any lengths: the deltas (when written) resolve to the new messages."""
    before = [ChatMessage(role="user", content=text) for text in base]
    after = [ChatMessage(role="system" if i == 0 else "user", content=text) for i, text in enumerate(new)]
    delta = delta_messages(before, after)
    if delta is not None:
        assert resolve_messages(before, delta) == after


def _window_prompt(step: int, window: int = 4) -> list[ChatMessage]:
    """A prompt shaped like the policy's: fixed instructions, then the last steps."""
    shown = range(max(1, step - window), step)
    history = "\n\n".join(f"[Action {k}]\nI compute the value of term {k} with a program.\n"
                          f"[Observation {k}]\n<tool_response>{k * 17}</tool_response>" for k in shown)
    return [ChatMessage(role="system", content="You are careful."),
            ChatMessage(role="user", content="Solve it.\n" * 40 + f"You have taken {step - 1} steps.\n\n{history}")]


def test_a_later_step_is_recorded_in_far_fewer_bytes_than_whole() -> None:
    """Step 9's prompt against step 8's: the delta holds the new step, not the repeated instructions."""
    before, after = _window_prompt(8), _window_prompt(9)
    delta = delta_messages(before, after)
    assert delta is not None and delta.kept == 1  # the system message is unchanged
    assert len(msgspec.json.encode(delta)) * 3 < len(msgspec.json.encode(after))


def _sealed(turns: int) -> TrajectorySealed:
    return TrajectorySealed(
        event_id="e", run_id="r", occurred_at=AT, problem_id="p", group_id="g", sample_index=0,
        data_source="d", reward=1.0, score=1.0, done_reason="answer", invalid_turns=0, model="m",
        turns=[Turn(step=k, prompt=_window_prompt(k), response=f"reply {k}") for k in range(1, turns + 1)],
    )


def test_a_sealed_trajectory_decodes_with_every_prompt_whole() -> None:
    """Its wire form writes later prompts as deltas; readers only ever see them whole."""
    sealed = _sealed(16)
    data = encode(sealed)
    assert b"prompt_delta" in data
    assert decode(data) == sealed
    whole = msgspec.json.encode(sealed)  # the same event with every prompt written out
    assert len(data) * 2 < len(whole)


def test_sealed_bytes_grow_linearly_with_turns() -> None:
    """Each further turn adds about the same bytes (a window's worth of prompt is not repeated)."""
    sizes = {n: len(encode(_sealed(n))) for n in (4, 8, 16)}
    assert (sizes[16] - sizes[8]) < 2.5 * (sizes[8] - sizes[4])


def test_a_corrupt_turn_delta_is_a_decode_error_naming_the_range() -> None:
    """A range past the previous turn's prompt cannot be resolved: the body is undecodable, not guessed."""
    raw = msgspec.json.decode(encode(_sealed(3)))
    raw["turns"][2]["prompt_delta"]["messages"][0]["pieces"] = [[0, 10**9]]
    with pytest.raises(DecodeError, match="outside its base"):
        decode(msgspec.json.encode(raw))


def _request(call: str, step: int, messages: list[ChatMessage], delta: PromptDelta | None = None,
             episode: str = "main") -> ModelCallRequested:
    return ModelCallRequested(event_id=f"{call}-q", run_id="r", occurred_at=AT, call_id=call, role="policy",
                              step=step, messages=messages, model="m", prompt_delta=delta, episode=episode)


def _chain(steps: int) -> list[ModelCallRequested]:
    """Requests as the log holds them: the first whole, each later one a delta of the one before."""
    out = [_request("c1", 1, _window_prompt(1))]
    for step in range(2, steps + 1):
        delta = delta_messages(_window_prompt(step - 1), _window_prompt(step))
        assert delta is not None
        wire = decode(encode(_request(f"c{step}", step, _window_prompt(step),
                                      PromptDelta(base_call=f"c{step - 1}", kept=delta.kept,
                                                  messages=delta.messages))))
        assert isinstance(wire, ModelCallRequested) and wire.messages == []  # the wire leaves them out
        out.append(wire)
    return out


def test_requests_resolve_through_the_chain_of_earlier_steps() -> None:
    """Step 6 builds on 5, which builds on 4...: each resolves to the prompt that was rendered."""
    history = _chain(6)
    assert resolved_prompt(history, history[-1]) == _window_prompt(6)
    assert whole_prompts(history)[history[3].event_id] == _window_prompt(4)
    shown = with_whole_prompts(history)
    assert [e.messages for e in shown] == [_window_prompt(k) for k in range(1, 7)]


def test_a_delta_naming_a_call_of_another_episode_does_not_resolve() -> None:
    """A base must be an earlier call of the same episode; anything else is named, never guessed."""
    history = _chain(2)
    foreign = msgspec.structs.replace(history[1], episode="round-1-policy")
    with pytest.raises(DeltaError, match="not an earlier call of episode 'round-1-policy'"):
        resolved_prompt([history[0], foreign], foreign)
    assert foreign.event_id not in whole_prompts([history[0], foreign])


def test_a_delta_keeping_more_messages_than_its_base_does_not_resolve() -> None:
    """``kept`` past the base's length is refused, not padded."""
    history = _chain(2)
    forged = msgspec.structs.replace(history[1], prompt_delta=PromptDelta(base_call="c1", kept=7, messages=[]))
    with pytest.raises(DeltaError, match="keeps 7 messages of a base of 2"):
        resolved_prompt([history[0], forged], forged)


def test_a_growing_chat_is_recorded_by_its_new_messages_only() -> None:
    """The messages a chat keeps are one count, not a range each: a step costs what it adds."""
    chat = [ChatMessage(role="system", content="s" * 300), ChatMessage(role="user", content="q" * 300)]
    sizes = []
    for step in range(8):
        longer = [*chat, ChatMessage(role="assistant", content=f"reply {step}" * 20),
                  ChatMessage(role="user", content=f"seen {step}" * 20)]
        delta = delta_messages(chat, longer)
        assert delta is not None and delta.kept == len(chat) and resolve_messages(chat, delta) == longer
        sizes.append(len(msgspec.json.encode(delta)))
        chat = longer
    assert max(sizes) - min(sizes) <= 4, sizes


def test_a_delta_range_outside_its_base_does_not_resolve() -> None:
    """A forged range is refused with the base's length in the message."""
    history = _chain(2)
    forged = msgspec.structs.replace(history[1], prompt_delta=PromptDelta(
        base_call="c1", messages=[MessageDelta(role="user", pieces=[(5, 10**6)])]))
    with pytest.raises(DeltaError, match="outside its base"):
        resolved_prompt([history[0], forged], forged)


def test_the_delta_algorithm_is_pinned_because_replay_compares_its_bytes() -> None:
    """Runs started with ``prompts: delta`` re-decide their deltas on replay, byte for byte.

    Any change to how pieces are chosen turns every such run NONDETERMINISTIC: a new algorithm
    needs a new ``RunStarted.prompts`` value, and this expected output stays as it is.
    """
    delta = delta_messages(_window_prompt(5), _window_prompt(6))
    assert msgspec.json.encode(delta).decode() == (
        '{"kept":1,"messages":[{"role":"user","pieces":[[0,400],"You have taken 5 steps.\\n",[532,822],'
        '"<tool_response>68</tool_response>\\n\\n[Action 5]\\nI compute the value of term 5 with a program.\\n'
        '[Observation 5]\\n<tool_response>85</tool_response>"]}]}'
    )
