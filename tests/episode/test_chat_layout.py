"""``episode.prompt_layout: chat``: each policy prompt continues the one before with the reply and what came back."""

from __future__ import annotations

import pytest

from engine.config.run_identity import settings_digest
from engine.config.settings import ConfigError, validate
from engine.testing.harness import make_settings
from events import ActionParsed, ModelCallRequested, TrajectorySealed, encode
from events.model import ChatMessage
from tests.episode.test_episode_flow import of, run_episode

TOOL = "<think>compute</think><python_code>print(6*7)</python_code>"


def _continues(before: list[ChatMessage], after: list[ChatMessage], reply: str) -> bool:
    """``after`` is ``before``, the reply as an assistant message, then user messages only."""
    head = after[: len(before) + 1]
    rest = after[len(before) + 1:]
    return head == [*before, ChatMessage(role="assistant", content=reply)] and rest \
        and all(m.role == "user" for m in rest)


async def test_every_prompt_continues_the_last_with_the_reply_and_the_observation() -> None:
    """Three tool steps, then the answer: four prompts, each the previous plus reply plus observation."""
    replies = [TOOL, "<python_code>print(1/0)</python_code>", "no action here", "<answer>\\boxed{42}</answer>"]
    events, model, _, _ = await run_episode(replies, episode={"max_steps": 4, "prompt_layout": "chat"})
    prompts = model.prompts
    assert len(prompts) == 4
    for k in range(3):
        assert _continues(prompts[k], prompts[k + 1], replies[k]), k
    assert "<tool_response>" in prompts[1][-1].content  # the program's output comes back as a user message
    assert "<answer>" in prompts[3][-1].content and "last turn" in prompts[3][-1].content  # the final note
    assert "python_code" not in prompts[3][-1].content  # tools are no longer offered
    [sealed] = of(events, TrajectorySealed)
    assert sealed.reward == 1.0 and [t.prompt for t in sealed.turns] == prompts


async def test_an_invalid_turn_gets_its_error_as_the_next_user_message() -> None:
    """A reply with no action: the error is what the model reads next, in the chat."""
    events, model, _, _ = await run_episode(["thinking aloud, no tags", "<answer>\\boxed{42}</answer>"],
                                            episode={"prompt_layout": "chat"})
    first_error = next(a for a in of(events, ActionParsed) if not a.valid).error
    assert model.prompts[1][-2] == ChatMessage(role="assistant", content="thinking aloud, no tags")
    assert first_error in model.prompts[1][-1].content


async def test_chat_prompts_are_recorded_as_the_messages_they_add() -> None:
    """The delta of a later step writes the earlier messages as ranges: each step adds about its new text."""
    events, _, _, _ = await run_episode([TOOL] * 5 + ["<answer>\\boxed{42}</answer>"],
                                        episode={"max_steps": 6, "prompt_layout": "chat"})
    requests = of(events, ModelCallRequested)
    sizes = [len(encode(r)) for r in requests[1:-1]]
    assert max(sizes) - min(sizes) < 200, sizes  # constant per step, not growing with the chat


def test_chat_layout_needs_the_apollo_protocol() -> None:
    """The reference protocols render the reference's own prompts: chat with them is refused by name."""
    with pytest.raises(ConfigError, match=r"prompt_layout: chat needs episode\.protocol apollo"):
        validate({"episode": {"prompt_layout": "chat", "protocol": "reference_test"}})
    with pytest.raises(ConfigError, match="prompt_layout"):
        validate({"episode": {"prompt_layout": "threaded"}})


def test_the_fresh_default_keeps_earlier_settings_digests() -> None:
    """Dataset runs recorded before the setting existed resume: its default is left out of the digest."""
    settings = make_settings().run_settings()
    before = {**settings, "episode": {k: v for k, v in settings["episode"].items() if k != "prompt_layout"}}
    assert settings["episode"]["prompt_layout"] == "fresh"
    assert settings_digest(settings, workflow="reason") == settings_digest(before, workflow="reason")
    chat = {**settings, "episode": {**settings["episode"], "prompt_layout": "chat"}}
    assert settings_digest(chat, workflow="reason") != settings_digest(settings, workflow="reason")
