"""Token ids, loss masks and token-level rewards for samples.

Recorded ids (``prompt_token_ids`` / ``response_token_ids`` in the events) are used
verbatim: they are exactly what the policy saw and wrote. Anything missing is tokenized
with a Hugging Face tokenizer loaded from a *local* path, prompts through its chat
template with ``add_generation_prompt=True``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, Protocol

import msgspec

from replay.errors import ReplayError
from replay.training.samples import Sample, Segment


class ChatTokenizer(Protocol):
    """The slice of a ``transformers`` tokenizer used here."""

    eos_token_id: int | None
    pad_token_id: int | None

    def apply_chat_template(self, conversation: Any, **kwargs: Any) -> Any: ...

    def encode(self, text: str, **kwargs: Any) -> list[int]: ...


class TokenOptions(msgspec.Struct, frozen=True, kw_only=True):
    """Lengths, truncation and reward shaping."""

    max_prompt_length: int = 4096
    max_response_length: int = 4096
    prompt_truncation: Literal["left", "right", "error"] = "left"
    """``left`` keeps the end of the prompt (the question and generation header)."""
    normalize_by_length: bool = False
    """Divide the outcome reward by the trajectory's number of turns."""


class TokenizationError(ValueError, ReplayError):
    """A sample cannot be tokenized (no tokenizer for missing ids, prompt too long...)."""


class TokenizedSample(msgspec.Struct, frozen=True, kw_only=True):
    """One sample as unpadded token lists of equal response length."""

    sample: Sample
    prompt_ids: list[int]
    response_ids: list[int]
    loss_mask: list[int]
    scores: list[float]
    """Token-level scores: rewards at segment ends, zero elsewhere."""
    prompt_truncated: int = 0
    """Tokens cut from the prompt."""
    response_truncated: int = 0
    """Tokens cut from the end of the response."""
    unplaced_reward: float = 0.0
    """Reward of an empty response; the batch puts it on the last column (as verl does)."""


def load_tokenizer(path: str | Path) -> Any:
    """A tokenizer from a local directory; never touches the network."""
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(str(path), local_files_only=True)


def tokenize_sample(
    sample: Sample, tokenizer: ChatTokenizer | None, options: TokenOptions | None = None
) -> TokenizedSample:
    """Token ids, loss mask and scores of one sample, truncated to the configured lengths.

    Raises:
        TokenizationError: ids are missing and no tokenizer was given, or the prompt is
            too long under ``prompt_truncation="error"``.
    """
    opts = options or TokenOptions()
    prompt = _prompt_ids(sample, tokenizer)
    pieces = _response_pieces(sample, tokenizer)
    ids: list[int] = []
    mask: list[int] = []
    scores: list[float] = []
    for segment, seg_ids in pieces:
        ids.extend(seg_ids)
        mask.extend([1 if segment.trained else 0] * len(seg_ids))
        scores.extend([0.0] * len(seg_ids))
        if seg_ids and segment.penalty:
            scores[-1] -= segment.penalty
    prompt, cut_prompt = _truncate_prompt(prompt, opts)
    cut_response = max(0, len(ids) - opts.max_response_length)
    if cut_response:
        ids, mask, scores = _truncate_response(ids, mask, scores, opts.max_response_length)
    unplaced = _place_outcome(sample, mask, scores, opts)
    return TokenizedSample(
        sample=sample,
        prompt_ids=prompt,
        response_ids=ids,
        loss_mask=mask,
        scores=scores,
        prompt_truncated=cut_prompt,
        response_truncated=cut_response,
        unplaced_reward=unplaced,
    )


def _need(tokenizer: ChatTokenizer | None, what: str) -> ChatTokenizer:
    if tokenizer is None:
        msg = f"{what} has no recorded token ids and no tokenizer was given"
        raise TokenizationError(msg)
    return tokenizer


def _messages(sample: Sample) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in sample.prompt]


def _template(tokenizer: ChatTokenizer, messages: list[dict[str, str]], gen: bool) -> str:
    return str(tokenizer.apply_chat_template(messages, tokenize=False, add_generation_prompt=gen))


def _encode(tokenizer: ChatTokenizer, text: str) -> list[int]:
    return list(tokenizer.encode(text, add_special_tokens=False))


def _prompt_ids(sample: Sample, tokenizer: ChatTokenizer | None) -> list[int]:
    if sample.prompt_token_ids is not None:
        return list(sample.prompt_token_ids)
    tok = _need(tokenizer, f"prompt of {sample.traj_uid}")
    return _encode(tok, _template(tok, _messages(sample), gen=True))


def _response_pieces(
    sample: Sample, tokenizer: ChatTokenizer | None
) -> list[tuple[Segment, list[int]]]:
    """Each segment with its ids; chat formatting between turns comes from the template."""
    if len(sample.response) == 1:
        seg = sample.response[0]
        if seg.token_ids is not None:
            return [(seg, list(seg.token_ids))]
        tok = _need(tokenizer, f"response of {sample.traj_uid}")
        return [(seg, _single_reply_ids(tok, sample, seg))]
    tok = _need(tokenizer, f"multi-turn sample {sample.traj_uid}")
    return _chat_pieces(tok, sample)


def _single_reply_ids(tok: ChatTokenizer, sample: Sample, seg: Segment) -> list[int]:
    """The reply plus the template's end-of-turn marker (the model must learn to stop)."""
    delta = _chat_delta(tok, _messages(sample), seg)
    return _encode(tok, delta)


def _chat_delta(tok: ChatTokenizer, history: list[dict[str, str]], seg: Segment) -> str:
    """Text the template adds for ``seg`` after ``history`` (generation prompt included)."""
    before = _template(tok, history, gen=True) if history else ""
    after_msgs = [*history, {"role": seg.role, "content": seg.text}]
    # After the model's text comes the next header only if another reply follows;
    # observations always end with the generation prompt of the next assistant turn.
    after = _template(tok, after_msgs, gen=not seg.trained)
    if after.startswith(before):
        return after[len(before) :]
    # Templates that rewrite history (e.g. stripping old reasoning) break the prefix
    # property; render the message on its own then.
    return _template(tok, [{"role": seg.role, "content": seg.text}], gen=not seg.trained)


def _chat_pieces(tok: ChatTokenizer, sample: Sample) -> list[tuple[Segment, list[int]]]:
    history = _messages(sample)
    pieces: list[tuple[Segment, list[int]]] = []
    for seg in sample.response:
        delta = _chat_delta(tok, history, seg)
        if seg.trained and seg.token_ids is not None:
            pieces.extend(_recorded_reply(tok, seg, delta))
        else:
            pieces.append((seg, _encode(tok, delta)))
        history.append({"role": seg.role, "content": seg.text})
    return pieces


def _recorded_reply(
    tok: ChatTokenizer, seg: Segment, delta: str
) -> list[tuple[Segment, list[int]]]:
    """Recorded reply ids, then the template's end-of-turn text as untrained formatting."""
    ids = list(seg.token_ids or [])
    suffix = delta[len(seg.text) :] if delta.startswith(seg.text) else ""
    suffix_ids = _encode(tok, suffix) if suffix else []
    if ids and suffix_ids and suffix_ids[0] == ids[-1]:
        suffix_ids = suffix_ids[1:]  # the recorded stop token already closes the turn
    formatting = Segment(role=seg.role, text=suffix, trained=False, step=seg.step)
    return [(seg, ids), (formatting, suffix_ids)]


def _truncate_prompt(prompt: list[int], opts: TokenOptions) -> tuple[list[int], int]:
    cut = len(prompt) - opts.max_prompt_length
    if cut <= 0:
        return prompt, 0
    if opts.prompt_truncation == "error":
        msg = f"prompt has {len(prompt)} tokens > max_prompt_length {opts.max_prompt_length}"
        raise TokenizationError(msg)
    if opts.prompt_truncation == "left":
        return prompt[cut:], cut
    return prompt[: opts.max_prompt_length], cut


def _truncate_response(
    ids: list[int],
    mask: list[int],
    scores: list[float],
    limit: int,
) -> tuple[list[int], list[int], list[float]]:
    """Cut at ``limit``; penalties of cut segments move onto the last kept token."""
    lost = sum(scores[limit:])
    ids, mask, scores = ids[:limit], mask[:limit], scores[:limit]
    if scores and lost:
        scores[-1] += lost
    return ids, mask, scores


def _place_outcome(
    sample: Sample, mask: list[int], scores: list[float], opts: TokenOptions
) -> float:
    """Outcome reward on the last trained token (last position if none is trained).

    Returns the reward (with penalties) that found no token: the response is empty.
    """
    reward = sample.outcome_reward
    if opts.normalize_by_length and sample.episode_length > 0:
        reward /= sample.episode_length
    if not scores:
        return reward - sum(s.penalty for s in sample.response)
    trained = [i for i, m in enumerate(mask) if m]
    scores[trained[-1] if trained else len(scores) - 1] += reward
    return 0.0
