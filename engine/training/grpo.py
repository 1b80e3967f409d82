"""One GRPO optimiser step on a verl ``DataProto``, with verl's own advantage and loss functions.

Advantages: ``core_algos.compute_grpo_outcome_advantage`` (reward minus its group's mean,
over the group's standard deviation; groups are the ``uid`` column). Loss: verl's
``vanilla`` policy loss (PPO clip 0.2, token-mean). The behaviour log-probabilities are
the ones the server recorded while sampling (``rollout_log_probs``), so the clip fraction
and KL say how far the trained policy is from the one that wrote the rollouts.
"""

from __future__ import annotations

from typing import Any

import msgspec


class StepResult(msgspec.Struct, frozen=True, kw_only=True):
    loss: float
    clip_fraction: float
    kl: float
    """verl's ``ppo_kl``: mean(old logprob - new logprob) over trained tokens."""
    grad_norm: float
    tokens: int
    """Trained (loss-masked) response tokens."""


def actor_config(group_size: int, clip_ratio: float = 0.2) -> Any:
    """verl's actor settings the loss function reads (clip ratios, token-mean)."""
    # deferred: verl pulls in torch and ray's config types
    from verl.workers.config import ActorConfig

    return ActorConfig(
        strategy="fsdp", ppo_mini_batch_size=1, ppo_micro_batch_size_per_gpu=1, use_dynamic_bsz=False,
        rollout_n=group_size, clip_ratio=clip_ratio, clip_ratio_low=clip_ratio, clip_ratio_high=clip_ratio,
        loss_agg_mode="token-mean",
    )  # fmt: skip


def response_log_probs(model: Any, data: Any, temperature: float = 1.0) -> Any:
    """Log-probabilities of each response token, shape ``(batch, response_len)``."""
    # deferred: torch is the train extra's
    import torch

    responses = data.batch["responses"]
    width = responses.size(1)
    out = model(
        input_ids=data.batch["input_ids"],
        attention_mask=data.batch["attention_mask"],
        position_ids=data.batch["position_ids"],
        logits_to_keep=width + 1,  # the vocabulary projection only where a response token is predicted
    )
    logits = out.logits[:, :-1, :].float()  # position t predicts token t+1
    if temperature > 0:
        logits = logits / temperature
    return torch.log_softmax(logits, dim=-1).gather(-1, responses.unsqueeze(-1)).squeeze(-1)


def grpo_step(model: Any, optimizer: Any, data: Any, config: Any, *, temperature: float = 1.0,
              max_grad_norm: float = 1.0) -> StepResult:
    """Advantages, loss, backward, gradient clip and one optimiser step."""
    # deferred: torch and verl are the train extra's
    import torch
    from verl.trainer.ppo import core_algos

    mask = data.batch["response_mask"].float()
    advantages, _ = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards=data.batch["token_level_scores"], response_mask=mask,
        index=data.non_tensor_batch["uid"],
    )  # fmt: skip
    model.train()
    log_prob = response_log_probs(model, data, temperature)
    recorded = "rollout_log_probs" in set(data.batch.keys())
    old_log_prob = data.batch["rollout_log_probs"] if recorded else log_prob.detach()
    loss_fn = core_algos.get_policy_loss_fn("vanilla")
    loss, metrics = loss_fn(
        old_log_prob=old_log_prob, log_prob=log_prob, advantages=advantages, response_mask=mask,
        loss_agg_mode=config.loss_agg_mode, config=config,
    )  # fmt: skip
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_([p for p in model.parameters() if p.requires_grad], max_grad_norm)
    optimizer.step()
    model.eval()
    return StepResult(
        loss=float(loss.detach()), clip_fraction=float(metrics["actor/pg_clipfrac"]),
        kl=float(metrics["actor/ppo_kl"]), grad_norm=float(grad_norm), tokens=int(mask.sum()),
    )  # fmt: skip
