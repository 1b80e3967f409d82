"""With ``episode.prompt_layout: chat`` verl trains every turn of a multi-step episode; its runs regrade."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl.experimental.agent_loop")

from engine.training.verl_loop.bridge import close_bridges
from events.episode import AnswerRegraded
from events.model import ModelResponded
from replay.verify import verify_run
from tests.cli.support import apollo
from tests.training.test_verl_agent_loop import make_worker
from tests.training.verl_fakes import batch_of, math_sample, smol_tokenizer_dir

pytestmark = [pytest.mark.nats, pytest.mark.timeout(180)]

@pytest.fixture(scope="module")
def smol_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2's tokenizer and a tiny model config in a local folder."""
    return smol_tokenizer_dir(tmp_path_factory.mktemp("smol"))


CHAT_RULES = [
    (r"<tool_response>[^<]*42", "<answer>\\boxed{42}</answer>"),  # after the program's output
    (r"6 times 7", "<python_code>print(6*7)</python_code>"),
]


async def test_every_turn_is_one_trained_sequence(smol_dir: Path, tmp_path: Path, nats_server: Any,
                                                   jetstream_log: Any) -> None:
    """A python step then the answer: both replies trained (mask 1), the observation between not (mask 0)."""
    import numpy as np
    import torch
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

    worker = make_worker(smol_dir, tmp_path, nats_server.url, CHAT_RULES,
                         run_config={"episode": {"max_steps": 3, "prompt_layout": "chat"}})
    samples = [math_sample("What is 6 times 7?", "42", 0, "g-a"), math_sample("What is 6 times 7?", "42", 0, "g-a")]
    try:
        data = await worker.generate_sequences(batch_of(samples))
    finally:
        await close_bridges()
    assert list(data.non_tensor_batch["apollo_untrained_calls"]) == [0, 0]
    assert list(data.non_tensor_batch["apollo_masked"]) == [False, False]
    assert data.batch["rm_scores"].sum(dim=1).tolist() == [1.0, 1.0]
    advantages, _ = compute_grpo_outcome_advantage(
        token_level_rewards=data.batch["rm_scores"], response_mask=data.batch["response_mask"],
        index=np.array(data.non_tensor_batch["uid"], dtype=object))
    assert torch.isfinite(advantages).all()
    _verl_loss_accepts(data)
    run_ids = list(data.non_tensor_batch["apollo_run_id"])
    for row, run_id in enumerate(run_ids):
        records = await jetstream_log.read_run(run_id)
        assert (await verify_run(records)).ok
        first, second = [r.event for r in records if isinstance(r.event, ModelResponded)]
        mask = data.batch["response_mask"][row].tolist()
        response = data.batch["responses"][row].tolist()
        trained = [token for token, bit in zip(response, mask, strict=True) if bit == 1]
        assert trained == (first.token_ids or []) + (second.token_ids or [])  # the server's ids, both turns
        start = len(first.token_ids or [])
        observation = mask[start:].index(1)  # the tool output between the replies: present, never trained
        assert observation > 0 and set(mask[start:start + observation]) == {0}
        assert second.prompt_token_ids == first.prompt_token_ids + response[:start + observation]  # no drift
        prompt = data.batch["prompts"][row]
        real = data.batch["attention_mask"][row, : prompt.shape[0]] == 1
        assert prompt[real].tolist() == first.prompt_token_ids
    regraded = run_ids[0]  # a trained sample's run can be graded again, as any recorded run
    code, _, err = apollo(tmp_path / "data", "regrade", regraded, "--grader", "exact", "--json",
                            "--nats-url", nats_server.url)
    assert code == 0, err[-2000:]
    records = await jetstream_log.read_run(regraded)
    assert [r.event.grader for r in records if isinstance(r.event, AnswerRegraded)] == ["exact"]


def _verl_loss_accepts(data: Any) -> None:
    """verl's apollo_grpo advantage and vanilla policy loss take the batch and give a finite, differentiable loss."""
    import numpy as np
    import torch
    from verl.trainer.ppo import core_algos

    from engine.training.grpo import actor_config
    from engine.training.verl_loop.advantage import grpo_without_masked

    mask = data.batch["response_mask"].float()
    advantages, _ = grpo_without_masked(data.batch["rm_scores"], mask, np.array(data.non_tensor_batch["uid"]))
    old = data.batch["rollout_log_probs"]
    current = old.clone().requires_grad_(True)  # the policy before its first update: ratio 1
    loss, _ = core_algos.get_policy_loss_fn("vanilla")(
        old_log_prob=old, log_prob=current, advantages=advantages, response_mask=mask,
        loss_agg_mode="token-mean", config=actor_config(group_size=2))
    loss.backward()
    assert torch.isfinite(loss) and current.grad is not None and torch.isfinite(current.grad).all()
