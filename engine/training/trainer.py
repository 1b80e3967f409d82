"""The trainer's half of a step: sealed trajectories -> samples -> token rows -> a GRPO step.

The same code trains rollouts that came through the bus and rollouts generated in-process
(bench/rl_loop.py compares the two), so the only difference between them is how the
trajectories arrived.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import msgspec

from engine.training.grpo import StepResult, actor_config, grpo_step
from events import TrajectorySealed
from replay.training.dataproto import collate
from replay.training.samples import SampleOptions, build_many
from replay.training.tokens import TokenOptions, tokenize_sample

LORA_TARGETS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")
LAYOUT = "per_turn"
"""One sample per turn: the demo's episodes have one turn, and this layout carries the
recorded logprobs (the behaviour policy of the PPO ratio)."""


class TrainOutcome(msgspec.Struct, frozen=True, kw_only=True):
    result: StepResult | None
    """``None`` when no trajectory of the batch was trainable (all skipped)."""
    rewards: list[float]
    samples: int
    skipped: list[str]
    tokenize_s: float
    train_s: float


def with_lora(model: Any, rank: int) -> Any:
    """The model with LoRA adapters (rank ``rank``, alpha ``2 * rank``) on every attention and MLP
    projection; only the adapters train (about 5M of 135M parameters for rank 16)."""
    # deferred: peft pulls in torch (it comes with verl, in the train extra)
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=rank, lora_alpha=lora_alpha(rank), lora_dropout=0.0, target_modules=list(LORA_TARGETS))
    return get_peft_model(model, config)


def lora_alpha(rank: int) -> int:
    """The adapters' ``lora_alpha``: their update is scaled by ``alpha / rank`` = 2."""
    return 2 * rank


def trainable_state(model: Any) -> dict[str, Any]:
    """The weights an update changes (the adapters, under LoRA): what a checkpoint holds."""
    names = {name for name, p in model.named_parameters() if p.requires_grad}
    return {name: t.detach().clone() for name, t in model.state_dict().items() if name in names}


class Trainer:
    """A model, its AdamW optimiser (over the trainable weights) and verl's actor settings."""

    def __init__(self, model: Any, tokenizer: Any, *, lr: float, group_size: int, temperature: float,
                 max_response_tokens: int) -> None:
        # deferred: torch is the train extra's
        import torch

        self.model = model
        self.tokenizer = tokenizer
        trainable = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(trainable, lr=lr, betas=(0.9, 0.99), weight_decay=0.0)
        self.config = actor_config(group_size)
        self.temperature = temperature
        self.token_options = TokenOptions(max_response_length=max_response_tokens + 1)

    def train(self, trajectories: Sequence[TrajectorySealed], staleness: dict[str, int | None]) -> TrainOutcome:
        """One optimiser step on these trajectories (blocking: run it in a thread)."""
        started = time.perf_counter()
        built = build_many(list(trajectories), LAYOUT, SampleOptions())
        rows = [tokenize_sample(s, self.tokenizer, self.token_options) for s in built.samples]
        tokenized = time.perf_counter()
        rewards = [t.reward for t in trajectories]
        skipped = [f"{s.traj_uid}: {s.reason}" for s in built.skipped]
        if not rows:
            return TrainOutcome(result=None, rewards=rewards, samples=0, skipped=skipped,
                                tokenize_s=tokenized - started, train_s=0.0)
        data = collate(rows, pad_token_id=int(self.tokenizer.pad_token_id),
                       staleness=[staleness.get(s.traj_uid) for s in built.samples])
        result = grpo_step(self.model, self.optimizer, data, self.config, temperature=self.temperature)
        return TrainOutcome(result=result, rewards=rewards, samples=len(rows), skipped=skipped,
                            tokenize_s=tokenized - started, train_s=time.perf_counter() - tokenized)
