"""Tokenized samples collated into verl's ``DataProto``.

Field names follow what verl's trainer reads: ``compute_response_mask`` slices the last
``responses.size(1)`` columns, ``compute_grpo_outcome_advantage`` groups rows by the
non-tensor ``uid`` and sums ``token_level_rewards`` per row. Prompts are left-padded and
responses right-padded, so prompt and response meet in the middle as in verl's rollouts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import torch

from replay.training.tokens import TokenizedSample

NON_TENSOR_KEYS = (
    "uid",
    "traj_uid",
    "data_source",
    "is_action_valid",
    "episode_rewards",
    "episode_lengths",
    "tool_callings",
    "index",
    "policy_version",
    "staleness",
    "step",
    "run_id",
    "sample_index",
)


def collate(
    items: Sequence[TokenizedSample],
    *,
    pad_token_id: int = 0,
    staleness: Sequence[int | None] | None = None,
    meta_info: dict[str, Any] | None = None,
    pad_to: tuple[int, int] | None = None,
) -> Any:
    """A ``verl.DataProto`` with one row per tokenized sample.

    Args:
        items: the rows, in order.
        pad_token_id: id written into padding positions (masked out everywhere).
        staleness: per row, trainer policy version minus the rollout's (``None`` unknown).
        meta_info: copied into ``DataProto.meta_info``.
        pad_to: fixed ``(prompt_length, response_length)``; default is the batch maximum.

    Raises:
        ValueError: no rows, or a row longer than ``pad_to``.
    """
    from verl import DataProto

    if not items:
        msg = "cannot build a DataProto from zero samples"
        raise ValueError(msg)
    plen, rlen = pad_to or (
        max(len(t.prompt_ids) for t in items),
        max(1, max(len(t.response_ids) for t in items)),
    )
    tensors = _tensors(items, plen, rlen, pad_token_id)
    stale = list(staleness) if staleness is not None else [None] * len(items)
    return DataProto.from_dict(
        tensors=tensors, non_tensors=_non_tensors(items, stale), meta_info=dict(meta_info or {})
    )


def _tensors(
    items: Sequence[TokenizedSample], plen: int, rlen: int, pad: int
) -> dict[str, torch.Tensor]:
    n = len(items)
    prompts = torch.full((n, plen), pad, dtype=torch.long)
    responses = torch.full((n, rlen), pad, dtype=torch.long)
    prompt_attn = torch.zeros((n, plen), dtype=torch.long)
    response_attn = torch.zeros((n, rlen), dtype=torch.long)
    response_mask = torch.zeros((n, rlen), dtype=torch.long)
    scores = torch.zeros((n, rlen), dtype=torch.float32)
    logprobs = torch.zeros((n, rlen), dtype=torch.float32)
    has_logprobs = True
    for row, item in enumerate(items):
        p, r = len(item.prompt_ids), len(item.response_ids)
        if p > plen or r > rlen:
            msg = f"row {row} ({p}+{r} tokens) exceeds pad_to ({plen}+{rlen})"
            raise ValueError(msg)
        if p:
            prompts[row, plen - p :] = torch.tensor(item.prompt_ids, dtype=torch.long)
            prompt_attn[row, plen - p :] = 1
        if r:
            responses[row, :r] = torch.tensor(item.response_ids, dtype=torch.long)
            response_attn[row, :r] = 1
            response_mask[row, :r] = torch.tensor(item.loss_mask, dtype=torch.long)
            scores[row, :r] = torch.tensor(item.scores, dtype=torch.float32)
        scores[row, -1] += item.unplaced_reward
        lp = item.sample.response_logprobs
        if lp is not None and len(lp) >= r:
            logprobs[row, :r] = torch.tensor(lp[:r], dtype=torch.float32)
        else:
            has_logprobs = False
    attention_mask = torch.cat([prompt_attn, response_attn], dim=1)
    out = {
        "prompts": prompts,
        "responses": responses,
        "input_ids": torch.cat([prompts, responses], dim=1),
        "attention_mask": attention_mask,
        "position_ids": torch.clip(torch.cumsum(attention_mask, dim=-1) - 1, min=0),
        "response_mask": response_mask,
        "token_level_scores": scores,
    }
    if has_logprobs:
        out["rollout_log_probs"] = logprobs
    return out


def _non_tensors(
    items: Sequence[TokenizedSample], stale: list[int | None]
) -> dict[str, np.ndarray]:
    columns: dict[str, list[Any]] = {key: [] for key in NON_TENSOR_KEYS}
    for item, staleness in zip(items, stale, strict=True):
        s = item.sample
        values = (
            s.uid,
            s.traj_uid,
            s.data_source,
            s.is_action_valid,
            s.episode_reward,
            s.episode_length,
            s.tool_callings,
            s.problem_id,
            s.policy_version,
            staleness,
            s.step,
            s.run_id,
            s.sample_index,
        )
        for key, value in zip(NON_TENSOR_KEYS, values, strict=True):
            columns[key].append(value)
    return {key: _array(key, values) for key, values in columns.items()}


_NUMERIC = {
    "is_action_valid": np.bool_,
    "episode_rewards": np.float32,
    "episode_lengths": np.int64,
    "tool_callings": np.int64,
}
"""Typed columns: verl code does arithmetic on these (``astype(np.float32)``, means)."""


def _array(key: str, values: list[Any]) -> np.ndarray:
    dtype = _NUMERIC.get(key)
    if dtype is not None:
        return np.asarray(values, dtype=dtype)
    return _object_array(values)


def _object_array(values: list[Any]) -> np.ndarray:
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr
