"""Trainer-driven rollouts: the driver that submits versioned groups with backpressure, and
the recorders of what the trainer discards and what it trains."""

from engine.rollouts.discard import discard_recorder
from engine.rollouts.driver import DriverOptions, DriverStats, RolloutDriver, SubmittedGroup
from engine.rollouts.trained import train_recorder

__all__ = ["DriverOptions", "DriverStats", "RolloutDriver", "SubmittedGroup", "discard_recorder", "train_recorder"]
