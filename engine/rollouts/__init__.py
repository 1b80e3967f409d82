"""Trainer-driven rollouts: the driver that submits versioned groups with backpressure, and
the recorder of what the trainer discards."""

from engine.rollouts.discard import discard_recorder
from engine.rollouts.driver import DriverOptions, DriverStats, RolloutDriver, SubmittedGroup

__all__ = ["DriverOptions", "DriverStats", "RolloutDriver", "SubmittedGroup", "discard_recorder"]
