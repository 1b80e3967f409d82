"""Policy versions: the trainer's weight updates and the serving side's answers to them.

A policy's versions are one replayable history of their own: every event of policy
``NAME`` has the run id ``policy-NAME`` (:func:`policy_run_id`), so its subjects are
``apollo.run.policy-NAME.policy.updated`` and so on, ``apollo.run.policy-NAME.>`` is the
whole version history, and no worker route reacts to them (they are not runs: nothing
submits a problem there). The trainer appends :class:`PolicyUpdated` after an optimiser
step; the serving side loads the weights and appends :class:`PolicyActivated` (only then
do model calls carry the new version) or :class:`PolicyUpdateFailed` (the old weights
keep serving).
"""

from __future__ import annotations

from typing import Final

import msgspec

from events.base import Event
from events.subjects import RUN_PREFIX

POLICY_RUN_PREFIX: Final = "policy-"
DEFAULT_POLICY: Final = "default"
POLICY_UPDATES: Final = f"{RUN_PREFIX}.*.policy.updated"
"""Every policy's updates (the serving side's durable consumer filters on this)."""
POLICY_ACTIVATIONS: Final = f"{RUN_PREFIX}.*.policy.activated"
"""Every policy's activations (what a worker watches to learn the served version)."""


def policy_run_id(name: str = DEFAULT_POLICY) -> str:
    """The run id holding policy ``name``'s version history."""
    return f"{POLICY_RUN_PREFIX}{name}"


class PolicyUpdated(Event, frozen=True, kw_only=True, tag="policy.updated"):
    """The trainer wrote new weights: version ``version`` of policy ``policy``."""

    policy: str = DEFAULT_POLICY
    version: int
    """Increases by at least one per update; the serving side refuses any other."""
    checkpoint: str
    """Where the weights are: a directory or file the serving side can read (a LoRA
    adapter directory when ``adapter`` is set, else the full weights)."""
    adapter: str | None = None
    """The LoRA adapter name to serve the weights under; ``None``: full weights."""
    base_model: str = ""
    """The model the weights belong to (the served base model for a LoRA adapter)."""
    roles: list[str] = msgspec.field(default_factory=lambda: ["policy"])
    """The model roles these weights answer for."""
    trainer_step: int | None = None
    """The optimiser step that produced the weights."""
    metrics: dict[str, float] = {}
    """Whatever the trainer wants to record with the step (loss, reward...)."""


class PolicyActivated(Event, frozen=True, kw_only=True, tag="policy.activated"):
    """The serving side now serves ``version``: new model calls of ``roles`` carry it."""

    policy: str = DEFAULT_POLICY
    version: int
    roles: list[str] = msgspec.field(default_factory=lambda: ["policy"])
    served_model: str | None = None
    """The model name new calls send (the LoRA adapter's); ``None`` keeps the configured one."""
    endpoint: str | None = None
    """The base URL that now serves it (``http://host:8000/v1``); ``None``: every endpoint
    of ``roles``."""
    method: str
    """How the weights were loaded: ``lora``, ``http_hook``, ``command_hook``, ``in_process``."""
    load_ms: float = 0.0


class PolicyUpdateFailed(Event, frozen=True, kw_only=True, tag="policy.update_failed"):
    """The update could not be served; the weights served before it keep serving."""

    policy: str = DEFAULT_POLICY
    version: int
    reason: str
    """One line: why (an older or repeated version, a missing checkpoint, the server's refusal)."""
    active_version: int | None = None
    """The version still served (``None`` when none was ever activated)."""


class RolloutDiscarded(Event, frozen=True, kw_only=True, tag="rollout.discarded"):
    """A sealed trajectory the trainer acknowledged without training it, and why.

    Appended to the trajectory's own run, so its history says what became of it.
    """

    trajectory_id: str
    """The ``trajectory.sealed`` event's id."""
    group_id: str
    reason: str
    policy_version: int | None = None
    """The oldest version among the trajectory's turns (``None``: unversioned)."""
    trainer_version: int | None = None
    """The trainer's version when it decided."""


class RolloutTrained(Event, frozen=True, kw_only=True, tag="rollout.trained"):
    """A sealed trajectory the trainer trained on, recorded when its batch was committed.

    Appended to the trajectory's own run, beside its grade, so an audit of that grade
    (``answer.regraded``) can name the training steps that were paid it.
    """

    trajectory_id: str
    """The ``trajectory.sealed`` event's id."""
    group_id: str
    trainer: str
    """Which trainer (its durable consumer's name)."""
    step: int | None = None
    """The trainer's optimiser step that used it (``None``: the trainer did not say)."""
    policy_version: int | None = None
    """The oldest version among the trajectory's turns (``None``: unversioned)."""
    trainer_version: int | None = None
    """The trainer's policy version when it trained the batch."""
    reward: float | None = None
    """The outcome reward it was paid (from ``reward_source``)."""
    reward_source: str = "ground_truth"
    episode: str = "main"
    """The trajectory's episode (evolve runs seal several)."""
    role: str = "policy"
