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
    Discarded,
    DiscardRecorder,
    Rollout,
    RolloutDelivery,
    RolloutGroup,
    RolloutSource,
    RolloutSubscription,
    SubscriptionOptions,
    SubscriptionStats,
    Trained,
    TrainingBatch,
    TrainingCursor,
    TrainRecorder,
    version_of,
)

__all__ = [
    "INVALID_TURN_PENALTY",
    "LAYOUTS",
    "DiscardRecorder",
    "Discarded",
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
    "TrainRecorder",
    "Trained",
    "TrainingBatch",
    "TrainingCursor",
    "build_many",
    "build_samples",
    "version_of",
]
