"""Which model settings and sampling parameters a role's calls are recorded with."""

from __future__ import annotations

from typing import Any

from events.model import SamplingParams


def model_settings(settings: dict[str, Any], role: str) -> dict[str, Any]:
    """The recorded settings of ``role``'s model: its own section over the policy's."""
    models = settings.get("models", {})
    merged = dict(models.get("policy", {}))
    if role != "policy":
        merged.update(models.get(role, {}))
    return merged


def policy_model(settings: dict[str, Any]) -> dict[str, Any]:
    return dict(settings.get("models", {}).get("policy", {}))


def sampling_params(model: dict[str, Any]) -> SamplingParams:
    return SamplingParams(
        temperature=float(model.get("temperature", 0.7)),
        top_p=float(model.get("top_p", 1.0)),
        top_k=int(model.get("top_k", -1)),
        max_tokens=int(model.get("max_tokens", 8192)),
    )
