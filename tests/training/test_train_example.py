"""The example trainer takes a real optimizer step and resumes exactly once."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import torch

from replay.training import InMemoryRolloutSource, SubscriptionOptions
from tests.training.conftest import trajectory, turn

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_verl.py"


def _example():
    spec = importlib.util.spec_from_file_location("train_verl_example", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _tiny_model(tokenizer):
    from transformers import Qwen2Config, Qwen2ForCausalLM

    torch.manual_seed(0)
    config = Qwen2Config(
        vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128,
    )  # fmt: skip
    return Qwen2ForCausalLM(config)


def _tool_turn():
    return turn(1, "python print 1 + 1", observation="output 2")


def _group(name):
    return [
        trajectory(name, 0, reward=1.0, turns=[_tool_turn(), turn(2, "the answer is 2")]),
        trajectory(name, 1, reward=0.0, turns=[turn(1, "the answer is 3", valid=False)]),
    ]  # fmt: skip


async def test_one_grpo_step_changes_weights_and_checkpoints(tmp_path, tokenizer):
    """One batch -> DataProto -> verl GRPO loss -> optimizer step; the cursor is saved."""
    example = _example()
    model = _tiny_model(tokenizer)
    before = [p.detach().clone() for p in model.parameters()]
    source = InMemoryRolloutSource(_group("a"))
    opts = SubscriptionOptions(
        group_size=2, fetch_timeout=0.0, idle_timeout=0.0, heartbeat_interval=0
    )
    losses = await example.train(
        source, model, tokenizer, checkpoint_dir=tmp_path, options=opts, lr=1e-2
    )
    assert len(losses) == 1 and torch.isfinite(torch.tensor(losses[0]))
    assert any(not torch.equal(a, b) for a, b in zip(before, model.parameters(), strict=True))
    assert source.unacked == []
    assert set(example.load_checkpoint(_tiny_model(tokenizer), tmp_path).committed) == {
        "traj-a-0",
        "traj-a-1",
    }


async def test_restart_from_checkpoint_skips_trained_rollouts(tmp_path, tokenizer):
    """A second run on the same checkpoint trains only what is new."""
    example = _example()
    source = InMemoryRolloutSource(_group("a"))
    opts = SubscriptionOptions(
        group_size=2, fetch_timeout=0.0, idle_timeout=0.0, heartbeat_interval=0
    )
    await example.train(
        source, _tiny_model(tokenizer), tokenizer, checkpoint_dir=tmp_path, options=opts
    )
    source.acked.clear()  # the broker lost every ack: all of group a comes back
    for event in _group("b"):
        source.publish(event)
    losses = await example.train(
        source,
        _tiny_model(tokenizer),
        tokenizer,
        checkpoint_dir=tmp_path,
        options=opts,
        layout="multi_turn",
    )
    assert len(losses) == 1  # only group b
