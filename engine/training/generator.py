"""Sampling from a transformers causal LM in batches, with the token ids and logprobs a trainer needs.

Requests that share their sampling parameters are generated together (left padding), which
on a CPU is several times faster than one at a time. Each completion keeps the exact prompt
ids the model saw and the ids it wrote (end-of-turn included, so training teaches it to
stop), and the log-probability of each written token under the sampling distribution.
The weights can be replaced between batches (:meth:`Generator.load_state`); a lock keeps
a batch and a swap from overlapping, so every completion comes from one version.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from typing import Any

import msgspec


class GenerationRequest(msgspec.Struct, frozen=True, kw_only=True):
    messages: list[dict[str, str]]
    max_tokens: int
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = -1
    seed: int | None = None

    def sampling_key(self) -> tuple[float, float, int, int | None]:
        """Requests with equal keys may share a batch."""
        return (self.temperature, self.top_p, self.top_k, self.seed)


class Completion(msgspec.Struct, frozen=True, kw_only=True):
    text: str
    prompt_token_ids: list[int]
    token_ids: list[int]
    logprobs: list[float]
    """Log-probability of each token in ``token_ids`` under the sampling temperature."""
    finish_reason: str
    """``stop`` (end-of-turn written) or ``length`` (``max_tokens`` reached)."""
    version: int
    """The weights version that wrote it."""


class Generator:
    """A model and tokenizer that sample completions for chat prompts."""

    def __init__(self, model: Any, tokenizer: Any, *, version: int = 0) -> None:
        self.model = model.eval()
        self.tokenizer = tokenizer
        self.version = version
        self._lock = threading.Lock()

    def prompt_ids(self, messages: Sequence[Mapping[str, str]]) -> list[int]:
        ids = self.tokenizer.apply_chat_template(
            [dict(m) for m in messages], tokenize=True, add_generation_prompt=True, return_dict=False
        )
        return [int(i) for i in ids]

    def load_state(self, state: Mapping[str, Any], version: int) -> None:
        """Serve new weights from the next batch on (waits for a running batch to end).

        ``state`` may hold only some weights (a LoRA update's adapters); each must exist here.
        """
        unknown = set(state) - set(self.model.state_dict())
        if unknown:
            msg = f"weights this model does not have: {sorted(unknown)[:3]}"
            raise ValueError(msg)
        with self._lock:
            self.model.load_state_dict(dict(state), strict=False)
            self.version = version

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """Completions in request order; requests are batched by sampling parameters."""
        out: list[Completion | None] = [None] * len(requests)
        groups: dict[tuple[float, float, int, int | None], list[int]] = {}
        for index, request in enumerate(requests):
            groups.setdefault(request.sampling_key(), []).append(index)
        with self._lock:
            for indices in groups.values():
                batch = [requests[i] for i in indices]
                for i, completion in zip(indices, self._generate_batch(batch), strict=True):
                    out[i] = completion
        return [c for c in out if c is not None]

    def _generate_batch(self, batch: Sequence[GenerationRequest]) -> list[Completion]:
        # deferred: torch is the train extra's, and heavy
        import torch

        first = batch[0]
        prompts = [self.prompt_ids(r.messages) for r in batch]
        width = max(len(p) for p in prompts)
        pad = int(self.tokenizer.pad_token_id)
        input_ids = torch.tensor([[pad] * (width - len(p)) + p for p in prompts])
        attention = torch.tensor([[0] * (width - len(p)) + [1] * len(p) for p in prompts])
        sample = first.temperature > 0
        options: dict[str, Any] = {"do_sample": sample, "max_new_tokens": max(r.max_tokens for r in batch)}
        if sample:
            options.update(temperature=first.temperature, top_p=first.top_p, top_k=max(first.top_k, 0))
        if first.seed is not None:
            torch.manual_seed(first.seed)
        with torch.no_grad():
            result = self.model.generate(
                input_ids=input_ids, attention_mask=attention, output_logits=True,
                return_dict_in_generate=True, pad_token_id=pad, **options,
            )  # fmt: skip
        new = result.sequences[:, width:]
        logits = torch.stack(result.logits, dim=1).float()  # (batch, new tokens, vocab), raw
        if sample:
            logits = logits / first.temperature
        logprobs = torch.log_softmax(logits, dim=-1).gather(-1, new.unsqueeze(-1)).squeeze(-1)
        return [
            self._completion(prompts[row], new[row].tolist(), logprobs[row].tolist(), batch[row].max_tokens)
            for row in range(len(batch))
        ]

    def _completion(self, prompt: list[int], ids: list[int], logprobs: list[float], limit: int) -> Completion:
        eos = int(self.tokenizer.eos_token_id)
        end = ids.index(eos) + 1 if eos in ids[:limit] else limit
        finish = "stop" if end <= limit and ids[end - 1] == eos else "length"
        kept = ids[:end]
        text_ids = kept[:-1] if finish == "stop" else kept
        return Completion(
            text=self.tokenizer.decode(text_ids, skip_special_tokens=True),
            prompt_token_ids=prompt, token_ids=kept, logprobs=logprobs[:end],
            finish_reason=finish, version=self.version,
        )  # fmt: skip
