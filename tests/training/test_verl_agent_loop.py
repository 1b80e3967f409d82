"""The ``apollo`` agent loop driven by verl's own AgentLoopWorker against a real nats-server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl.experimental.agent_loop")

from engine.nats.jetstream import JetStreamEventLog
from engine.training.verl_loop.bridge import close_bridges
from events.model import ModelResponded
from events.run import ProblemSubmitted
from replay.verify import verify_run
from tests.training.verl_fakes import (
    ScriptedServer,
    batch_of,
    loops_file,
    math_sample,
    smol_tokenizer_dir,
    verl_config,
)

pytestmark = [pytest.mark.nats, pytest.mark.timeout(180)]

RULES = [
    (r"\[Observation 1\]", "<answer>\\boxed{42}</answer>"),
    (r"6 times 7", "<python_code>print(6*7)</python_code>"),
    (r"2 plus 3", "<answer>\\boxed{6}</answer>"),
]


@pytest.fixture(scope="module")
def smol_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """SmolLM2's tokenizer and a tiny model config in a local folder."""
    return smol_tokenizer_dir(tmp_path_factory.mktemp("smol"))


def make_worker(smol_dir: Path, tmp_path: Path, url: str, rules: list[tuple[str, str]], **options: Any) -> Any:
    """verl's real AgentLoopWorker, its server manager replaced by the scripted stand-in."""
    from verl.experimental.agent_loop.agent_loop import AgentLoopWorker

    options.setdefault("run_config", {"episode": {"max_steps": 3}})
    options.setdefault("run_timeout", 60)
    config = verl_config(smol_dir, loops_file(tmp_path / "loops.yaml", url, **options))
    worker = AgentLoopWorker(config, llm_client=None)
    worker.llm_client = ScriptedServer(worker.tokenizer, rules)
    return worker


async def test_worker_batch_through_grpo(smol_dir: Path, tmp_path: Path, nats_server: Any, jetstream_log: Any) -> None:
    """Four samples (two GRPO groups) become recorded runs, a DataProto, and GRPO advantages."""
    import numpy as np
    import torch
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

    worker = make_worker(smol_dir, tmp_path, nats_server.url, RULES)
    samples = [math_sample("What is 6 times 7?", "42", 0, "g-a"), math_sample("What is 6 times 7?", "42", 0, "g-a"),
               math_sample("What is 2 plus 3?", "5", 1, "g-b"), math_sample("What is 2 plus 3?", "5", 1, "g-b")]
    try:
        data = await worker.generate_sequences(batch_of(samples))
        later = await worker.generate_sequences(batch_of([math_sample("What is 2 plus 3?", "5", 1, "g-c")]))
    finally:
        await close_bridges()
    (later_run,) = later.non_tensor_batch["apollo_run_id"]
    (submitted,) = [r.event for r in await jetstream_log.read_run(later_run) if isinstance(r.event, ProblemSubmitted)]
    assert submitted.metadata["policy_version"] == 3  # the step the servers last reported, as `apollo rollouts` stamps
    run_ids = list(data.non_tensor_batch["apollo_run_id"])
    assert len(set(run_ids)) == 4
    assert list(data.non_tensor_batch["apollo_masked"]) == [False] * 4
    scores = data.batch["rm_scores"].sum(dim=1).tolist()
    assert scores == [1.0, 1.0, 0.0, 0.0]
    advantages, _ = compute_grpo_outcome_advantage(
        token_level_rewards=data.batch["rm_scores"], response_mask=data.batch["response_mask"],
        index=np.array(data.non_tensor_batch["uid"], dtype=object))
    assert torch.isfinite(advantages).all()
    assert data.batch.get("rollout_log_probs", None) is not None

    log = await JetStreamEventLog.connect(nats_server.url)
    try:
        for row, run_id in enumerate(run_ids):
            records = await log.read_run(run_id)
            assert (await verify_run(records)).ok
            replies = [r.event for r in records if isinstance(r.event, ModelResponded)]
            assert replies and all(r.policy_version == 3 for r in replies)
            last = replies[-1]  # apollo renders each turn afresh: verl trains the last sequence
            length = len(last.token_ids or [])
            response = data.batch["responses"][row].tolist()
            assert response[:length] == last.token_ids  # the server's ids, untouched
            assert data.batch["response_mask"][row, :length].tolist() == [1] * length
            prompt = data.batch["prompts"][row]
            real = data.batch["attention_mask"][row, : prompt.shape[0]] == 1
            assert prompt[real].tolist() == last.prompt_token_ids  # the prompt generated on, no drift
            if row < 2:  # the python step is recorded and generated, not trained
                assert len(replies) == 2 and data.non_tensor_batch["apollo_untrained_calls"][row] == 1
    finally:
        await log.close()
