"""Weight sync as events: the serving side's answer to ``policy.updated``.

``active`` is this process's view of the served versions (the model router reads it),
``loaders`` make an endpoint serve new weights (vLLM LoRA, a reload hook, an in-process
callable), ``sync`` is the effector that reacts to updates and records the outcome,
``announce`` is the trainer's side, ``watch`` feeds a worker process from the log.
"""

from engine.serving.active import ActivePolicies, ActivePolicy, active_policies
from engine.serving.announce import announce_update, wait_for_outcome
from engine.serving.loaders import (
    CallableLoader,
    CommandReloadHook,
    HttpReloadHook,
    LoadFailed,
    VllmLoraLoader,
    WeightLoader,
)
from engine.serving.sync import PolicySync
from engine.serving.watch import ActivationWatcher, watching_activations

__all__ = [
    "ActivationWatcher",
    "ActivePolicies",
    "ActivePolicy",
    "CallableLoader",
    "CommandReloadHook",
    "HttpReloadHook",
    "LoadFailed",
    "PolicySync",
    "VllmLoraLoader",
    "WeightLoader",
    "active_policies",
    "announce_update",
    "wait_for_outcome",
    "watching_activations",
]
