"""Which model settings and sampling parameters a role's calls are recorded with."""

from __future__ import annotations

from events.model import SamplingParams
from handlers.run_settings import ModelSpec


def sampling_params(model: ModelSpec) -> SamplingParams:
    return SamplingParams(temperature=model.temperature, top_p=model.top_p, top_k=model.top_k,
                          max_tokens=model.max_tokens)
