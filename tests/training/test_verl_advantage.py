"""``apollo_grpo``: verl's GRPO with masked apollo samples out of their groups, selectable by name."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("verl.trainer.ppo.core_algos")

import torch
from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage, get_adv_estimator_fn

from engine.training.verl_loop.advantage import ESTIMATOR, grpo_without_masked, register

ROOT = Path(__file__).resolve().parents[2]


def _batch(rewards: list[float], masked: list[bool], groups: list[str], width: int = 4):
    """Outcome rewards on each row's last token; masked rows train no token."""
    token_rewards = torch.zeros(len(rewards), width)
    token_rewards[:, -1] = torch.tensor(rewards)
    mask = torch.ones(len(rewards), width)
    mask[torch.tensor(masked)] = 0
    token_rewards[torch.tensor(masked)] = 0
    return token_rewards, mask, np.array(groups, dtype=object)


def test_a_masked_sample_no_longer_moves_its_groups_advantages() -> None:
    """Stock GRPO counts a failure's placeholder 0 in the group; apollo_grpo computes the group without it."""
    rewards, mask, index = _batch([1.0, 0.0, 0.0, 1.0, 1.0], [False, True, False, False, False],
                                  ["a", "a", "a", "b", "b"])
    ours, _ = grpo_without_masked(rewards, mask, index)
    stock, _ = compute_grpo_outcome_advantage(rewards, mask, index)
    kept = [0, 2, 3, 4]
    alone, _ = compute_grpo_outcome_advantage(rewards[kept], mask[kept], index[kept])
    assert torch.equal(ours[kept], alone)  # exactly verl's GRPO over the samples that train
    assert torch.count_nonzero(ours[1]) == 0  # the masked row: no advantage at all
    assert not torch.allclose(stock[0], ours[0])  # the stock estimator's group mean did include the failure


def test_a_group_of_only_masked_samples_trains_nothing() -> None:
    """Every sample of a group failed: zeros, no division by an empty group."""
    rewards, mask, index = _batch([0.0, 0.0, 1.0], [True, True, False], ["a", "a", "b"])
    ours, returns = grpo_without_masked(rewards, mask, index)
    assert torch.count_nonzero(ours[:2]) == 0 and torch.equal(ours, returns)


def test_dr_grpo_from_the_algorithm_config() -> None:
    """``norm_adv_by_std_in_grpo: false`` in verl's algorithm config is honoured (Dr. GRPO)."""
    from omegaconf import OmegaConf

    rewards, mask, index = _batch([1.0, 0.0, 0.0], [False, False, False], ["a", "a", "a"])
    ours, _ = grpo_without_masked(rewards, mask, index, config=OmegaConf.create({"norm_adv_by_std_in_grpo": False}))
    plain, _ = compute_grpo_outcome_advantage(rewards, mask, index, norm_adv_by_std_in_grpo=False)
    assert torch.equal(ours, plain)


def test_verl_computes_it_by_name_through_its_own_compute_advantage() -> None:
    """Registered, verl's trainer path (``compute_advantage`` with the algorithm config) uses it on a DataProto."""
    from omegaconf import OmegaConf
    from verl import DataProto
    from verl.trainer.ppo.ray_trainer import compute_advantage

    register()
    register()  # idempotent: a second registration (every Ray worker runs the hook) is no error
    assert get_adv_estimator_fn(ESTIMATOR) is grpo_without_masked
    rewards, mask, index = _batch([1.0, 0.0, 0.0], [False, True, False], ["a", "a", "a"])
    data = DataProto.from_dict(tensors={"token_level_rewards": rewards, "response_mask": mask},
                               non_tensors={"uid": index})
    out = compute_advantage(data, adv_estimator=ESTIMATOR, config=OmegaConf.create({"norm_adv_by_std_in_grpo": True}))
    expected, _ = grpo_without_masked(rewards, mask, index)
    assert torch.equal(out.batch["advantages"], expected)


def test_the_recipe_selects_it_and_registers_it_in_every_ray_worker() -> None:
    """grpo_apollo.yaml names apollo_grpo and a Ray setup hook that resolves to the registration."""
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "examples" / "verl"), version_base=None):
        config = compose(config_name="grpo_apollo")
    assert config.algorithm.adv_estimator == ESTIMATOR
    hook = config.ray_kwargs.ray_init.runtime_env.worker_process_setup_hook
    module, _, name = hook.rpartition(".")
    assert getattr(importlib.import_module(module), name) is register


@pytest.mark.timeout(120)
def test_a_fresh_ray_worker_knows_it_through_the_recipes_setup_hook() -> None:
    """The hook string, given to Ray as the recipe gives it, registers the estimator in a new worker process."""
    import ray
    from hydra import compose, initialize_config_dir

    with initialize_config_dir(config_dir=str(ROOT / "examples" / "verl"), version_base=None):
        hook = compose(config_name="grpo_apollo").ray_kwargs.ray_init.runtime_env.worker_process_setup_hook

    @ray.remote
    def known() -> bool:
        from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY

        return ESTIMATOR in ADV_ESTIMATOR_REGISTRY

    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False,
             runtime_env={"worker_process_setup_hook": hook, "env_vars": {"PYTHONPATH": str(ROOT)}})
    try:
        assert ray.get(known.remote(), timeout=90) is True
    finally:
        ray.shutdown()
