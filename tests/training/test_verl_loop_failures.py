"""Failed samples are masked, never trained as 0; bad input and an unreachable engine fail clearly."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl.experimental.agent_loop")

from engine.training.verl_loop.bridge import EngineUnreachable, close_bridges
from engine.training.verl_loop.masking import drop_masked
from engine.training.verl_loop.sample import SampleError
from events.model import ModelCallFailed
from tests.training.test_verl_agent_loop import make_worker
from tests.training.verl_fakes import ScriptedServer, batch_of, math_sample, smol_tokenizer_dir

pytestmark = [pytest.mark.nats, pytest.mark.timeout(180)]

RULES = [(r"2 plus 3", "<answer>\\boxed{5}</answer>"), (r"3 plus 4", "<answer>\\boxed{7}</answer>")]


@pytest.fixture(scope="module")
def smol_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2's tokenizer and a tiny model config in a local folder."""
    return smol_tokenizer_dir(tmp_path_factory.mktemp("smol"))


async def test_model_error_masks_the_sample(smol_dir: Path, tmp_path: Path, nats_server: Any,
                                            jetstream_log: Any) -> None:
    """A failed generation masks its sample (mask 0, the reason kept) and drop_masked removes it."""
    import numpy as np
    import torch
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

    worker = make_worker(smol_dir, tmp_path, nats_server.url, RULES, run_config={"episode": {"max_steps": 1}})
    worker.llm_client = ScriptedServer(worker.tokenizer, RULES, fail_on="3 plus 4")
    samples = [math_sample("What is 2 plus 3?", "5", 0, "g"), math_sample("What is 2 plus 3?", "5", 0, "g"),
               math_sample("What is 3 plus 4?", "7", 1, "g")]
    try:
        data = await worker.generate_sequences(batch_of(samples))
    finally:
        await close_bridges()
    masked = list(data.non_tensor_batch["apollo_masked"])
    assert masked == [False, False, True]
    assert "model call failed (server_error)" in data.non_tensor_batch["apollo_failure"][2]
    assert data.batch["response_mask"][2].sum().item() == 0  # no token of it is trained
    records = await jetstream_log.read_run(data.non_tensor_batch["apollo_run_id"][2])
    assert any(isinstance(r.event, ModelCallFailed) for r in records)
    kept = drop_masked(data)
    assert len(kept) == 2
    advantages, _ = compute_grpo_outcome_advantage(
        token_level_rewards=kept.batch["rm_scores"], response_mask=kept.batch["response_mask"],
        index=np.array(kept.non_tensor_batch["uid"], dtype=object))
    assert torch.isfinite(advantages).all()


async def test_unfinished_run_is_masked(smol_dir: Path, tmp_path: Path, nats_server: Any, jetstream_log: Any) -> None:
    """A run that does not end within run_timeout yields a masked sample, not a hang."""
    worker = make_worker(smol_dir, tmp_path, nats_server.url, RULES, workers=False, run_timeout=0.5,
                         run_config={"episode": {"max_steps": 1}})
    try:  # no apollo worker runs anywhere: the submitted run never starts
        data = await worker.generate_sequences(batch_of([math_sample("What is 2 plus 3?", "5", 0, "g")]))
    finally:
        await close_bridges()
    assert data.non_tensor_batch["apollo_masked"][0]
    assert "did not end within 0.5 s" in data.non_tensor_batch["apollo_failure"][0]


async def test_unreachable_engine_names_the_url(smol_dir: Path, tmp_path: Path) -> None:
    """No NATS at the configured URL: one error naming it, within the bounded wait."""
    url = "nats://127.0.0.1:9"
    worker = make_worker(smol_dir, tmp_path, url, RULES, log_timeout=2)
    try:
        with pytest.raises(EngineUnreachable, match=re.escape(url)):
            await worker.generate_sequences(batch_of([math_sample("What is 2 plus 3?", "5", 0, "g")]))
    finally:
        await close_bridges()


async def test_bad_samples_are_named(smol_dir: Path, tmp_path: Path, nats_server: Any) -> None:
    """A sample without ground truth, and an unknown agent_name, each fail with one error naming it."""
    worker = make_worker(smol_dir, tmp_path, nats_server.url, RULES)
    no_truth = math_sample("What is 2 plus 3?", "5", 0, "g")
    no_truth["reward_model"] = {"style": "rule"}
    with pytest.raises(SampleError, match="ground truth"):
        await worker.generate_sequences(batch_of([no_truth]))
    with pytest.raises(AssertionError, match="Agent loop apolo not registered"):
        await worker.generate_sequences(batch_of([math_sample("What is 2 plus 3?", "5", 0, "g", agent="apolo")]))
