"""Leaving masked apollo samples out of a verl batch before its advantages are computed.

A masked sample (``apollo_masked``: the run failed, a model call or a tool failed, the run did
not end in time) trains no token: its ``response_mask`` is all 0. verl's GRPO still counts
its placeholder reward of 0 in its group's mean and standard deviation; :func:`drop_masked`
removes such rows first, so a failure never moves the other samples' advantages either.
"""

from __future__ import annotations

from typing import Any

import numpy as np

MASKED = "apollo_masked"


def masked_rows(data: Any) -> np.ndarray:
    """A boolean per row of a verl ``DataProto``: True for masked apollo samples."""
    column = data.non_tensor_batch.get(MASKED)
    if column is None:
        return np.zeros(len(data), dtype=bool)
    return np.array([bool(v) for v in column], dtype=bool)


def drop_masked(data: Any) -> Any:
    """The ``DataProto`` without its masked apollo samples (the same object when there are none)."""
    masked = masked_rows(data)
    if not masked.any():
        return data
    return data.select_idxs(~masked)
