"""Accept the reference system's config keys so its example configs keep working.

Reference keys are mapped onto apollo's settings; keys that only steered the
reference's own plumbing (data preprocessing, output paths...) are accepted and
ignored; anything else is left in place so validation names it as unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from engine.config import deep_merge
from engine.errors import ConfigError

APOLLO_SECTIONS = {"nats", "models", "episode", "evolve", "branches", "dataset", "worker", "log", "data_dir"}

IGNORED_TOP_LEVEL = {"preprocess", "entrypoint_module"}
IGNORED_RUN_KEYS = {"tag", "policy_env_num"}
DATASET_RUN_KEYS = ("data_root", "dataset_name", "file_name")
"""Joined into the dataset path as the reference does (``engine.dataset_cli``)."""
IGNORED_ENV_KEYS = {"name", "group_n", "seed", "env_name", "resources_per_worker"}

EPISODE_KEYS = {
    "max_steps": "max_steps",
    "history_length": "history_length",
    "enable_python_code": "enable_python_code",
    "enable_local_rag": "enable_local_rag",
    "python_code_timeout": "python_code_timeout",
}
MODEL_KEYS = {
    "model_name": "model",
    "model": "model",
    "base_url": "base_url",
    "api_key": "api_key",
    "temperature": "temperature",
    "top_p": "top_p",
    "top_k": "top_k",
    "max_tokens": "max_tokens",
    "system_prompt": "system_prompt",
    "timeout": "timeout",
    "max_retries": "max_retries",
}


_ENV_SECTIONS = ("informal_math_evolving", "informal_math", "informal_math_training")
"""The reference's env.config sections that hold evolving-loop settings."""

def translate(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Rewrite reference-style keys into apollo's layout; apollo keys pass through."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key in IGNORED_TOP_LEVEL:
            continue
        if key == "policy_model_cfg":
            _merge(out, {"models": {"policy": model_settings(value, key)}})
        elif key == "verifier_cfg":
            verifier = model_settings(value, key)
            _merge(out, {"models": {"verifier": verifier, "summarizer": verifier, "aggregator": verifier}})
        elif key == "default_verifier_cfg":
            _merge(out, {"evolve": {"default_verifier": model_settings(value, key)}})
        elif key == "branch_max_workers":
            _merge(out, {"evolve": {"branch_max_workers": value}})
        elif key == "branches" and isinstance(value, list):
            out["branches"] = [_branch(item, index) for index, item in enumerate(value)]
        elif key == "run" and isinstance(value, Mapping):
            _merge(out, _run_section(value))
        elif key == "env" and isinstance(value, Mapping):
            _merge(out, _env_section(value))
        elif isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            _merge(out, {key: dict(value)})  # apollo keys lay over translated ones
        else:
            out[key] = value
    return out


def model_settings(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        msg = f"invalid config: {where} must be a mapping"
        raise ConfigError(msg)
    settings: dict[str, Any] = {}
    for key, item in value.items():
        if key not in MODEL_KEYS:
            msg = f"invalid config: unknown key {where}.{key}"
            raise ConfigError(msg)
        settings[MODEL_KEYS[key]] = item
    return settings


def _branch(item: Any, index: int) -> dict[str, Any]:
    where = f"branches[{index}]"
    if not isinstance(item, Mapping):
        msg = f"invalid config: {where} must be a mapping"
        raise ConfigError(msg)
    branch: dict[str, Any] = {"branch_id": str(item.get("branch_id", f"branch-{index}"))}
    for key, value in item.items():
        if key == "branch_id":
            continue
        if key in ("policy_model_cfg", "verifier_cfg"):
            branch[key.removesuffix("_model_cfg").removesuffix("_cfg")] = model_settings(value, f"{where}.{key}")
        else:
            msg = f"invalid config: unknown key {where}.{key}"
            raise ConfigError(msg)
    return branch


def _run_section(run: Mapping[str, Any]) -> dict[str, Any]:
    evolve: dict[str, Any] = {}
    dataset: dict[str, Any] = {}
    for key, value in run.items():
        if key in IGNORED_RUN_KEYS:
            continue
        if key in DATASET_RUN_KEYS:
            dataset[key] = value
        elif key == "evolving_round":
            evolve["rounds"] = value
        elif key == "test_times":
            evolve["test_times"] = value
        elif key == "verifier_env_num":
            evolve["verifiers"] = value
        else:
            msg = f"invalid config: unknown key run.{key}"
            raise ConfigError(msg)
    return {"evolve": evolve, "dataset": dataset} if dataset else {"evolve": evolve}


def _env_section(env: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in env.items():
        if key in IGNORED_ENV_KEYS:
            continue
        if key == "config" and isinstance(value, Mapping):
            _merge(out, _env_section(value))
        elif key in _ENV_SECTIONS and isinstance(value, Mapping):
            _merge(out, _evolving_section(value, f"env.config.{key}"))
        elif key in EPISODE_KEYS:
            _merge(out, {"episode": {EPISODE_KEYS[key]: value}})
        elif key == "memory_type":
            _merge(out, {"evolve": {"step_memory": value}})
        elif key == "rollout" and isinstance(value, Mapping):
            _merge(out, _rollout_section(value))
        else:
            msg = f"invalid config: unknown key env.{key}"
            raise ConfigError(msg)
    return out


def _rollout_section(rollout: Mapping[str, Any]) -> dict[str, Any]:
    """``env.rollout.n``: samples per problem, the GRPO group size (``n <= 0`` means 1, as in the reference)."""
    out: dict[str, Any] = {}
    for key, value in rollout.items():
        if key != "n":
            msg = f"invalid config: unknown key env.rollout.{key}"
            raise ConfigError(msg)
        if isinstance(value, bool) or not isinstance(value, int):
            msg = f"invalid config: env.rollout.n must be a whole number, got {value!r}"
            raise ConfigError(msg)
        out = {"dataset": {"samples": max(1, value)}}
    return out


def _evolving_section(section: Mapping[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in section.items():
        if key in ("log_requests", "execution_mode"):
            continue
        if key == "rag" and isinstance(value, Mapping):
            _merge(out, _rag_section(value, f"{where}.{key}"))
            continue
        if key == "evolving_round":
            _merge(out, {"evolve": {"rounds": value}})
        elif key == "enable_verify":
            _merge(out, {"evolve": {"enable_verify": value}})
        elif key in EPISODE_KEYS:
            _merge(out, {"episode": {EPISODE_KEYS[key]: value}})
        elif key == "memory_type":
            _merge(out, {"evolve": {"step_memory": value}})
        elif key == "policy_env" and isinstance(value, Mapping):
            _merge(out, _role_env(value, f"{where}.{key}", "episode"))
        elif key == "verifier_env" and isinstance(value, Mapping):
            _merge(out, {"evolve": {"verifier_episode": _role_env(value, f"{where}.{key}", None)}})
        elif key == "nd_memory" and isinstance(value, Mapping):
            _merge(out, {"evolve": _nd_memory(value, f"{where}.{key}")})
        elif key == "concurrency" and isinstance(value, Mapping):
            _merge(out, {"evolve": {k: v for k, v in value.items()}})
        else:
            msg = f"invalid config: unknown key {where}.{key}"
            raise ConfigError(msg)
    return out


def _role_env(section: Mapping[str, Any], where: str, target: str | None) -> dict[str, Any]:
    values: dict[str, Any] = {}
    memory: dict[str, Any] = {}
    for key, value in section.items():
        if key in EPISODE_KEYS:
            values[EPISODE_KEYS[key]] = value
        elif key == "memory_type":
            memory["memory_type"] = value
        else:
            msg = f"invalid config: unknown key {where}.{key}"
            raise ConfigError(msg)
    if target is None:
        return {**values, **memory}
    out: dict[str, Any] = {target: values}
    if memory:
        out["evolve"] = {"step_memory": memory["memory_type"]}
    return out


RAG_CHAT_KEYS = {"chat_base_url": "base_url", "chat_model": "model", "chat_timeout": "timeout"}


def _rag_section(section: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The reference's retrieval chat model rewrites every query and summarises every result.

    ``rag_base_url`` named its retrieval service; apollo searches in process, so it is ignored.
    """
    chat: dict[str, Any] = {}
    for key, value in section.items():
        if key == "rag_base_url":
            continue
        if key not in RAG_CHAT_KEYS:
            msg = f"invalid config: unknown key {where}.{key}"
            raise ConfigError(msg)
        chat[RAG_CHAT_KEYS[key]] = value
    out: dict[str, Any] = {"episode": {"rag_rewrite_query": True, "rag_summarize": True}}
    if chat:
        out["models"] = {"rag_rewriter": dict(chat), "rag_summarizer": dict(chat)}
    return out


def _nd_memory(section: Mapping[str, Any], where: str) -> dict[str, Any]:
    """The solution memory: how many earlier attempts to show, and how to pick them."""
    keys = {"scored_history_length": "scored_history_length", "strategy": "retrieval", "memory_type": "solution_memory"}
    out: dict[str, Any] = {}
    for key, value in section.items():
        if key not in keys:
            msg = f"invalid config: unknown key {where}.{key}"
            raise ConfigError(msg)
        out[keys[key]] = value
    return out


def _merge(out: dict[str, Any], extra: dict[str, Any]) -> None:
    merged = deep_merge(out, extra)
    out.clear()
    out.update(merged)
