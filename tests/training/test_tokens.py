"""Token ids, loss masks and reward placement."""

from __future__ import annotations

import pytest

from replay.training.samples import build_samples
from replay.training.tokens import TokenizationError, TokenOptions, tokenize_sample
from tests.training.conftest import trajectory, turn


def _ids(tokenizer, text):
    return tokenizer.encode(text, add_special_tokens=False)


def test_recorded_token_ids_are_used_verbatim_without_tokenizer():
    """Recorded prompt/response ids pass through untouched; the reward sits on the last token."""
    t = trajectory(turns=[turn(1, "x", prompt_token_ids=[7, 8, 9], response_token_ids=[4, 5, 6])])
    (sample,) = build_samples(t, "per_turn").samples
    tok = tokenize_sample(sample, None)
    assert tok.prompt_ids == [7, 8, 9]
    assert tok.response_ids == [4, 5, 6]
    assert tok.loss_mask == [1, 1, 1]
    assert tok.scores == [0.0, 0.0, 1.0]


def test_missing_ids_without_tokenizer_raise_clear_error():
    """No recorded ids and no tokenizer is an error naming the trajectory."""
    (sample,) = build_samples(trajectory(), "per_turn").samples
    with pytest.raises(TokenizationError, match="traj-g1-0"):
        tokenize_sample(sample, None)


def test_prompt_goes_through_chat_template_with_generation_prompt(tokenizer):
    """Prompts are rendered with the chat template and end with the assistant header."""
    t = trajectory(turns=[turn(1, "the answer is 2")])
    (sample,) = build_samples(t, "per_turn").samples
    tok = tokenize_sample(sample, tokenizer)
    messages = [{"role": m.role, "content": m.content} for m in sample.prompt]
    text = tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert tok.prompt_ids == _ids(tokenizer, text)
    assert tok.response_ids == [*_ids(tokenizer, "the answer is 2"), tokenizer.eos_token_id]
    assert tok.scores[-1] == 1.0 and sum(tok.scores) == 1.0


def test_invalid_turn_reward_includes_penalty_at_last_token(tokenizer):
    """An invalid per-turn sample carries outcome minus penalty on its last token."""
    t = trajectory(reward=1.0, turns=[turn(1, "so", valid=False)])
    (sample,) = build_samples(t, "per_turn").samples
    tok = tokenize_sample(sample, tokenizer)
    assert tok.scores[-1] == pytest.approx(0.9)
    assert sum(tok.scores[:-1]) == 0.0


def test_multi_turn_mask_covers_model_tokens_only(tokenizer):
    """Loss mask is 1 on replies (with their end marker) and 0 on observations."""
    t = trajectory(
        reward=1.0,
        turns=[
            turn(1, "python print 1 + 1", observation="output 2", valid=False),
            turn(2, "the answer is 2"),
        ],
    )
    (sample,) = build_samples(t, "multi_turn").samples
    tok = tokenize_sample(sample, tokenizer)
    messages = [{"role": m.role, "content": m.content} for m in sample.prompt]
    full = [
        *messages,
        {"role": "assistant", "content": "python print 1 + 1"},
        {"role": "user", "content": "output 2"},
        {"role": "assistant", "content": "the answer is 2"},
    ]
    whole = _ids(tokenizer, tokenizer.apply_chat_template(full, tokenize=False))
    assert tok.prompt_ids + tok.response_ids == whole
    reply1 = [*_ids(tokenizer, "python print 1 + 1"), tokenizer.eos_token_id]
    obs = _ids(tokenizer, "\n<|im_start|>user\noutput 2<|im_end|>\n<|im_start|>assistant\n")
    reply2 = [*_ids(tokenizer, "the answer is 2"), tokenizer.eos_token_id]
    assert tok.loss_mask == [1] * len(reply1) + [0] * len(obs) + [1] * len(reply2)
    assert tok.scores[len(reply1) - 1] == pytest.approx(-0.1)
    assert tok.scores[-1] == pytest.approx(1.0)
    assert sum(tok.scores) == pytest.approx(0.9)


def test_multi_turn_uses_recorded_reply_ids(tokenizer):
    """Recorded reply ids are kept; the template's end marker is not duplicated."""
    eos = tokenizer.eos_token_id
    t = trajectory(
        turns=[
            turn(1, "python", observation="output", response_token_ids=[30, eos]),
            turn(2, "ok", response_token_ids=[31, eos]),
        ]
    )
    (sample,) = build_samples(t, "multi_turn").samples
    tok = tokenize_sample(sample, tokenizer)
    assert tok.response_ids[:2] == [30, eos]
    assert tok.response_ids[-2:] == [31, eos]
    assert tok.loss_mask[:2] == [1, 1] and tok.loss_mask[-2:] == [1, 1]
    assert tok.response_ids.count(eos) == 3  # two replies + the observation's own end


def test_long_prompt_is_left_truncated_and_recorded(tokenizer):
    """Prompts over the limit keep their end; the cut is recorded."""
    t = trajectory(turns=[turn(1, "ok", prompt_token_ids=list(range(10)), response_token_ids=[5])])
    (sample,) = build_samples(t, "per_turn").samples
    tok = tokenize_sample(sample, None, TokenOptions(max_prompt_length=4))
    assert tok.prompt_ids == [6, 7, 8, 9]
    assert tok.prompt_truncated == 6


def test_long_prompt_errors_when_truncation_is_error():
    """``prompt_truncation='error'`` refuses over-long prompts."""
    t = trajectory(turns=[turn(1, "ok", prompt_token_ids=list(range(10)), response_token_ids=[5])])
    (sample,) = build_samples(t, "per_turn").samples
    with pytest.raises(TokenizationError, match="max_prompt_length"):
        tokenize_sample(sample, None, TokenOptions(max_prompt_length=4, prompt_truncation="error"))


def test_long_response_is_cut_and_reward_stays_on_last_kept_token():
    """Truncated responses still get their reward (and penalty) on the last kept token."""
    t = trajectory(
        reward=1.0,
        turns=[turn(1, "x", valid=False, prompt_token_ids=[1], response_token_ids=list(range(8)))],
    )
    (sample,) = build_samples(t, "per_turn").samples
    tok = tokenize_sample(sample, None, TokenOptions(max_response_length=3))
    assert tok.response_ids == [0, 1, 2]
    assert tok.response_truncated == 5
    assert tok.scores == [0.0, 0.0, pytest.approx(0.9)]


def test_normalize_by_length_divides_outcome_by_turns():
    """With ``normalize_by_length`` the outcome is divided by the number of turns."""
    turns = [turn(i, "x", prompt_token_ids=[1], response_token_ids=[2, 3]) for i in (1, 2, 3, 4)]
    samples = build_samples(trajectory(reward=1.0, turns=turns), "per_turn").samples
    tok = tokenize_sample(samples[0], None, TokenOptions(normalize_by_length=True))
    assert tok.scores == [0.0, 0.25]


def test_empty_response_keeps_its_reward_for_the_last_column():
    """An empty response has no token; its reward is carried as unplaced."""
    t = trajectory(reward=1.0, turns=[turn(1, "", prompt_token_ids=[1], response_token_ids=[])])
    (sample,) = build_samples(t, "per_turn").samples
    tok = tokenize_sample(sample, None)
    assert tok.response_ids == [] and tok.unplaced_reward == 1.0
