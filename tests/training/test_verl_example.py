"""examples/verl: the GRPO config composes with verl's own, and its data reaches the loop as a problem."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("verl.experimental.agent_loop")

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "verl"


def test_grpo_config_selects_the_apollo_loop() -> None:
    """The recipe composes over verl's ppo_trainer: GRPO, log-probs on, the apollo loop by default."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(EXAMPLE), version_base=None):
        config = compose(config_name="grpo_apollo")
    rollout = config.actor_rollout_ref.rollout
    assert config.algorithm.adv_estimator == "apollo_grpo"  # GRPO without masked samples (advantage.py)
    assert rollout.agent.default_agent_loop == "apollo"
    assert rollout.calculate_log_probs is True
    assert (ROOT / rollout.agent.agent_loop_config_path).is_file()


def test_agent_loop_file_options_are_valid() -> None:
    """The agent-loop file's entry names the loop class and options LoopOptions accepts."""
    import msgspec
    from omegaconf import OmegaConf

    from engine.training.verl_loop.loop import LoopOptions

    (entry,) = OmegaConf.load(EXAMPLE / "agent_loops.yaml")
    assert entry.name == "apollo"
    assert entry._target_ == "engine.training.verl_loop.loop.ApolloAgentLoop"
    options = msgspec.convert(OmegaConf.to_container(entry.apollo), LoopOptions)
    assert options.run_config["episode"]["enable_python_code"] is True
    from engine.config.settings import validate

    checked = validate(options.run_config)  # the runs' settings are apollo's own, checked as a config file is
    assert checked.episode.prompt_layout == "chat"  # every turn trained (docs/training.md "Tokens")


def test_prepared_rows_reach_the_loop(tmp_path: Path, tokenizer: Any) -> None:
    """prepare_data's parquet, read by verl's RLHFDataset, gives the loop the question and ground truth."""
    import sys

    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    from engine.training.verl_loop.sample import problem_of

    sys.path.insert(0, str(EXAMPLE))
    try:
        import prepare_data
    finally:
        sys.path.remove(str(EXAMPLE))
    source = tmp_path / "math.jsonl"
    source.write_text('{"question": "what is 1 + 1 ?", "answer": "2"}\n'
                      '{"question": "what is 2 + 2 ?", "answer": "4"}\n')
    assert prepare_data.convert(source, tmp_path / "train.parquet", "train") == 2
    config = OmegaConf.create({"prompt_key": "prompt", "max_prompt_length": 256, "return_raw_chat": True,
                               "filter_overlong_prompts": False, "truncation": "error"})
    dataset = RLHFDataset(data_files=[str(tmp_path / "train.parquet")], tokenizer=tokenizer, config=config)
    item = dataset[1]
    assert item["agent_name"] == "apollo"
    problem = problem_of(item)
    assert (problem.question, problem.ground_truth) == ("what is 2 + 2 ?", "4")
