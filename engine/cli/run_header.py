"""What `apollo run` says about the numbers it prints: whose model, which sampling, which settings
digest, and where the results go by default (a path per model and settings, so another run never
replaces them)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import msgspec

from engine.cli.submitted_settings import policy_words
from engine.config.settings import Settings

EVOLVE_ROLES = ("verifier", "summarizer", "aggregator")
"""Roles besides the policy whose model an evolve run calls (named when not the policy's)."""
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def default_results_path(dataset: str, workflow: str, model: str, digest: str) -> Path:
    """``results/<dataset>-<workflow>-<model>-<digest>.jsonl``: the model for the reader, the digest for the rest."""
    return Path("results") / f"{dataset}-{workflow}-{model_slug(model)}-{digest}.jsonl"


def model_slug(model: str) -> str:
    """A file-name part: ``Qwen/Qwen2.5-7B`` -> ``Qwen2.5-7B``; ``scripted:x/demo.json`` -> ``scripted-demo``."""
    if model.startswith("scripted:"):
        return "scripted-" + (_UNSAFE.sub("-", Path(model.removeprefix("scripted:")).stem).strip("-.") or "model")
    return _UNSAFE.sub("-", model.rstrip("/").rsplit("/", 1)[-1]).strip("-.") or "model"


def header_lines(settings: Settings, workflow: str, digest: str) -> list[str]:
    """The lines above the tables: each model called (policy first), its sampling, the settings digest."""
    policy = settings.model_for("policy")
    lines = [policy_words(msgspec.to_builtins(policy)), f"  sampling: {sampling_words(policy)}"]
    if workflow == "evolve":
        seen = {(policy.model, policy.base_url)}
        for role in EVOLVE_ROLES:
            spec = settings.model_for(role)
            if (spec.model, spec.base_url) not in seen:
                seen.add((spec.model, spec.base_url))
                words = policy_words(msgspec.to_builtins(spec)).removeprefix("policy ")
                lines += [f"{role} {words}", f"  sampling: {sampling_words(spec)}"]
    lines.append(f"settings digest {digest} (workflow {workflow})")
    return lines


def sampling_words(spec: Any) -> str:
    """``temperature 0.6, top-p 0.95, top-k 20, max tokens 8192``."""
    top_k = "off" if spec.top_k < 0 else str(spec.top_k)
    return f"temperature {spec.temperature:g}, top-p {spec.top_p:g}, top-k {top_k}, max tokens {spec.max_tokens}"


def policy_fields(settings: Settings) -> dict[str, Any]:
    """The policy model as `--json` gives it: name, endpoint, sampling, and whether its replies are canned."""
    spec = settings.model_for("policy")
    return {"model": spec.model, "base_url": spec.base_url, "scripted": spec.model.startswith("scripted:"),
            "sampling": {"temperature": spec.temperature, "top_p": spec.top_p, "top_k": spec.top_k,
                         "max_tokens": spec.max_tokens}}
