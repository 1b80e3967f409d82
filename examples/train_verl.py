"""Train a policy from the rollout stream: a verl-style GRPO loop on exactly-once batches.

What it shows, step by step:

1. restore the last checkpoint (model weights *and* the subscription cursor);
2. subscribe to sealed trajectories (``JetStreamRolloutSource`` on a durable consumer)
   and receive GRPO groups (``RolloutSubscription``);
3. turn each batch into verl's ``DataProto`` (``batch.samples`` -> ``tokenize_sample`` ->
   ``collate``), compute GRPO advantages with verl's ``compute_grpo_outcome_advantage``
   and the clipped policy loss with verl's ``compute_policy_loss_vanilla``;
4. save the checkpoint with ``batch.cursor`` inside it, then ``await batch.commit()``.

Kill it at any point and start it again: every trajectory is trained exactly once.
A production trainer runs verl's FSDP/Megatron workers instead of ``train_step``; the
subscription, cursor and commit protocol stay the same.

Run against a live engine (local model and tokenizer folders, no downloads)::

    python examples/train_verl.py --nats-url nats://127.0.0.1:4222 \\
        --model ./my-small-model --checkpoint-dir ./ckpt --group-size 8
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import torch

from engine.cli.tracking import Trackers, open_trackers, parse_kinds
from replay.training import RolloutSource, RolloutSubscription, SubscriptionOptions, TrainingCursor
from replay.training.dataproto import collate
from replay.training.tokens import TokenizationError, TokenOptions, tokenize_sample

CURSOR_FILE = "cursor.json"
WEIGHTS_FILE = "model.pt"


def actor_config(group_size: int) -> Any:
    """verl's actor settings with the reference's PPO clip (0.2) and token-mean loss."""
    from verl.workers.config import ActorConfig

    return ActorConfig(
        strategy="fsdp",
        ppo_mini_batch_size=1,
        ppo_micro_batch_size_per_gpu=1,
        use_dynamic_bsz=False,
        rollout_n=group_size,
    )


def response_log_probs(model: Any, data: Any) -> torch.Tensor:
    """Log-probabilities the model gives each response token, shape ``(batch, response_len)``."""
    responses = data.batch["responses"]
    out = model(
        input_ids=data.batch["input_ids"],
        attention_mask=data.batch["attention_mask"],
        position_ids=data.batch["position_ids"],
    )
    width = responses.size(1)
    logits = out.logits[:, -width - 1 : -1, :].float()  # position t predicts token t+1
    return torch.log_softmax(logits, dim=-1).gather(-1, responses.unsqueeze(-1)).squeeze(-1)


def train_step(model: Any, optimizer: Any, data: Any, config: Any) -> float:
    """One GRPO policy-gradient step on a DataProto; returns the loss."""
    from verl.trainer.ppo import core_algos

    mask = data.batch["response_mask"].float()
    advantages, _ = core_algos.compute_grpo_outcome_advantage(
        token_level_rewards=data.batch["token_level_scores"],
        response_mask=mask,
        index=data.non_tensor_batch["uid"],
    )
    model.train()
    log_prob = response_log_probs(model, data)
    # Recorded rollout logprobs are the behaviour policy; without them the step is on-policy.
    keys = set(data.batch.keys())
    recorded = "rollout_log_probs" in keys
    old_log_prob = data.batch["rollout_log_probs"] if recorded else log_prob.detach()
    loss, _metrics = core_algos.compute_policy_loss_vanilla(
        old_log_prob=old_log_prob,
        log_prob=log_prob,
        advantages=advantages,
        response_mask=mask,
        loss_agg_mode=config.loss_agg_mode,
        config=config,
    )
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return float(loss.item())


def step_metrics(loss: float, trajectories: Sequence[Any], staleness: Iterable[int | None]) -> dict[str, float]:
    """What one training step logs (staleness only when the rollouts know their policy version)."""
    rewards = [t.reward for t in trajectories]
    scores = [t.score for t in trajectories]
    metrics = {"loss": loss, "reward/mean": sum(rewards) / max(1, len(rewards)),
               "score/mean": sum(scores) / max(1, len(scores)), "trajectories": len(trajectories)}
    known = [value for value in staleness if value is not None]
    if known:
        metrics["staleness/max"] = max(known)
    return metrics


def load_checkpoint(model: Any, directory: Path) -> TrainingCursor:
    """Restore weights and cursor (a fresh cursor when there is no checkpoint)."""
    cursor_path = directory / CURSOR_FILE
    if not cursor_path.exists():
        return TrainingCursor()
    model.load_state_dict(torch.load(directory / WEIGHTS_FILE, weights_only=True))
    return TrainingCursor.decode(cursor_path.read_bytes())


def save_checkpoint(model: Any, cursor: TrainingCursor, directory: Path) -> None:
    """Weights first, cursor last, each replaced atomically: the cursor never runs ahead."""
    directory.mkdir(parents=True, exist_ok=True)
    tmp = directory / (WEIGHTS_FILE + ".tmp")
    torch.save(model.state_dict(), tmp)
    os.replace(tmp, directory / WEIGHTS_FILE)
    tmp = directory / (CURSOR_FILE + ".tmp")
    tmp.write_bytes(cursor.encode())
    os.replace(tmp, directory / CURSOR_FILE)


async def train(
    source: RolloutSource,
    model: Any,
    tokenizer: Any,
    *,
    checkpoint_dir: Path,
    options: SubscriptionOptions,
    layout: str = "per_turn",
    lr: float = 1e-6,
    max_steps: int | None = None,
    token_options: TokenOptions | None = None,
    trackers: Trackers | None = None,
) -> list[float]:
    """Follow ``source`` and train until it goes idle or ``max_steps``; returns the losses.

    With ``trackers``, each step logs its loss, the batch's mean reward and score, and the
    largest staleness (what `apollo report --training` plots).
    """
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr)
    config = actor_config(options.group_size)
    cursor = load_checkpoint(model, checkpoint_dir)
    sub = RolloutSubscription(source, options, cursor=cursor, policy_version=0)
    pad = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else 0
    losses: list[float] = []
    try:
        async for batch in sub:
            samples = batch.samples(layout).samples
            stale = batch.staleness_of()
            try:
                rows = [tokenize_sample(s, tokenizer, token_options) for s in samples]
            except TokenizationError as exc:
                print(f"batch {batch.number}: not trainable ({exc}); committing without training")
                rows = []
            if rows:
                data = collate(
                    rows, pad_token_id=pad, staleness=[stale[s.traj_uid] for s in samples]
                )
                # Off the event loop, so the subscription keeps heartbeating.
                losses.append(await asyncio.to_thread(train_step, model, optimizer, data, config))
                sub.policy_version = (sub.policy_version or 0) + 1
                if trackers is not None:
                    trackers.log(len(losses), step_metrics(losses[-1], batch.trajectories, stale.values()))
            save_checkpoint(model, batch.cursor, checkpoint_dir)
            await batch.commit()
            if max_steps is not None and len(losses) >= max_steps:
                break
    finally:
        await sub.aclose()
    return losses


async def _main(args: argparse.Namespace) -> None:
    from transformers import AutoModelForCausalLM

    from engine.config.settings import load_settings
    from engine.nats.rollout_source import connect_trainer
    from engine.nats.security import ClientSecurity
    from replay.training.tokens import load_tokenizer

    # the trainer role's credentials and CA come from APOLLO_NATS_* (deploy/README.md)
    nats_settings = load_settings().nats
    nc, source = await connect_trainer(
        args.nats_url, security=ClientSecurity.from_settings(nats_settings),
        durable=args.durable, ack_wait=args.ack_wait,
    )
    try:
        model = AutoModelForCausalLM.from_pretrained(args.model, local_files_only=True)
        tokenizer = load_tokenizer(args.tokenizer or args.model)
        options = SubscriptionOptions(
            group_size=args.group_size,
            groups_per_batch=args.groups_per_batch,
            group_timeout=args.group_timeout,
            heartbeat_interval=args.ack_wait / 3,
        )
        trackers = open_trackers(args.metrics_csv or args.checkpoint_dir / "metrics.csv", args.track,
                                 name=f"train-{args.durable}", config={"lr": args.lr, "group_size": args.group_size})
        try:
            losses = await train(
                source, model, tokenizer, checkpoint_dir=args.checkpoint_dir, options=options,
                layout=args.layout, lr=args.lr, max_steps=args.max_steps, trackers=trackers,
            )  # fmt: skip
        finally:
            trackers.close()
        print(f"trained {len(losses)} steps")
        for seq, reason in source.rejected:  # unreadable trajectories are terminated, never trained
            print(f"not trainable: stream seq {seq}: {reason}")
    finally:
        await nc.drain()


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--nats-url", default=os.environ.get("APOLLO_NATS_URL", "nats://127.0.0.1:4222"))
    p.add_argument("--durable", default="trainer")
    p.add_argument("--model", required=True, help="local Hugging Face model folder")
    p.add_argument("--tokenizer", help="local tokenizer folder (default: the model's)")
    p.add_argument("--checkpoint-dir", type=Path, required=True)
    p.add_argument("--group-size", type=int, default=8)
    p.add_argument("--groups-per-batch", type=int, default=1)
    p.add_argument("--group-timeout", type=float, default=600.0)
    p.add_argument("--layout", choices=("per_turn", "multi_turn"), default="per_turn")
    p.add_argument("--lr", type=float, default=1e-6)
    p.add_argument("--ack-wait", type=float, default=60.0)
    p.add_argument("--max-steps", type=int)
    p.add_argument("--metrics-csv", type=Path, help="per-step metrics CSV (default: CHECKPOINT_DIR/metrics.csv)")
    p.add_argument("--track", type=parse_kinds, default=[], metavar="KINDS",
                   help="also log to tensorboard and/or wandb (offline), comma-separated")
    asyncio.run(_main(p.parse_args(argv)))


if __name__ == "__main__":
    main()
