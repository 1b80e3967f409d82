"""Training from the rollout stream: samples, exactly-once grouped batches, exports.

Light imports only; ``tokens``, ``dataproto`` and ``export`` pull in transformers,
torch/verl and pyarrow and are imported explicitly where needed.
"""

from replay.training.memory_source import InMemoryDelivery, InMemoryRolloutSource
from replay.training.samples import (
    INVALID_TURN_PENALTY,
    LAYOUTS,
    Layout,
    Sample,
    SampleOptions,
    SampleSet,
    Segment,
    Skipped,
    build_many,
    build_samples,
)
from replay.training.subscription import (
    Rollout,
    RolloutDelivery,
    RolloutGroup,
    RolloutSource,
    RolloutSubscription,
    SubscriptionOptions,
    SubscriptionStats,
    TrainingBatch,
    TrainingCursor,
)

__all__ = [
    "INVALID_TURN_PENALTY",
    "LAYOUTS",
    "InMemoryDelivery",
    "InMemoryRolloutSource",
    "Layout",
    "Rollout",
    "RolloutDelivery",
    "RolloutGroup",
    "RolloutSource",
    "RolloutSubscription",
    "Sample",
    "SampleOptions",
    "SampleSet",
    "Segment",
    "Skipped",
    "SubscriptionOptions",
    "SubscriptionStats",
    "TrainingBatch",
    "TrainingCursor",
    "build_many",
    "build_samples",
]
