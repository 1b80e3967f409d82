"""``apollo_grpo``: verl's GRPO advantage with masked apollo samples left out of their groups.

A masked sample (the run failed, a model call or a tool failed, the run did not end in time)
has an all-zero ``response_mask`` and a placeholder reward of 0. verl's stock GRPO counts that
placeholder in its group's mean and standard deviation, so one failure shifts the advantages
of the group's other samples. This estimator computes verl's own GRPO
(``compute_grpo_outcome_advantage``, same epsilon and ``norm_adv_by_std_in_grpo``) over the
rows that train at least one token, and gives masked rows an advantage of 0.

verl's stock trainer selects it by name (``algorithm.adv_estimator: apollo_grpo``) once
:func:`register` has run in the process computing advantages: the recipe
(``examples/verl/grpo_apollo.yaml``) names it as Ray's ``worker_process_setup_hook``, so every
Ray worker registers it at start, and importing the agent loop registers it too.
"""

from __future__ import annotations

from typing import Any, Final

import numpy as np

ESTIMATOR: Final = "apollo_grpo"


def grpo_without_masked(token_level_rewards: Any, response_mask: Any, index: np.ndarray,
                        epsilon: float = 1e-6, norm_adv_by_std_in_grpo: bool | None = None,
                        config: Any = None, **_: Any) -> tuple[Any, Any]:
    """(advantages, returns) as verl's GRPO over the trained rows; 0 for rows that train nothing."""
    import torch
    from verl.trainer.ppo.core_algos import compute_grpo_outcome_advantage

    if norm_adv_by_std_in_grpo is None:
        norm_adv_by_std_in_grpo = bool(_setting(config, "norm_adv_by_std_in_grpo", True))
    advantages = torch.zeros_like(token_level_rewards)
    trained = (response_mask.sum(dim=-1) > 0).nonzero(as_tuple=True)[0]
    if trained.numel():
        rows = trained.cpu().numpy()
        kept, _ = compute_grpo_outcome_advantage(
            token_level_rewards=token_level_rewards[trained], response_mask=response_mask[trained],
            index=np.asarray(index, dtype=object)[rows], epsilon=epsilon,
            norm_adv_by_std_in_grpo=norm_adv_by_std_in_grpo, config=config,
        )
        advantages[trained] = kept
    return advantages, advantages


def register() -> None:
    """Make ``apollo_grpo`` known to verl's advantage registry in this process (idempotent)."""
    from verl.trainer.ppo.core_algos import ADV_ESTIMATOR_REGISTRY, register_adv_est

    if ADV_ESTIMATOR_REGISTRY.get(ESTIMATOR) is not grpo_without_masked:
        register_adv_est(ESTIMATOR)(grpo_without_masked)


def _setting(config: Any, name: str, default: Any) -> Any:
    if config is None:
        return default
    getter = getattr(config, "get", None)
    return getter(name, default) if callable(getter) else getattr(config, name, default)
