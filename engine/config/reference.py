"""Accept the reference system's config keys so its example configs keep working.

Every reference key apollo accepts is listed in :data:`REFERENCE_KEYS` with its fate:
the apollo settings it sets, or why it is accepted without effect (it steered only the
reference's own plumbing and apollo has no counterpart), and which values are refused.
A key that is not in the table is an error naming it, so no setting is silently dropped
(``tests/evolve/test_config_fates.py`` walks the table). ``base_config`` is merged by
:func:`engine.config.settings.read_config_file` before translation.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.config.merge import deep_merge
from engine.errors import ConfigError
from handlers.workflows import RUN_SECTIONS

APOLLO_SECTIONS = {"nats", "dataset", "worker", "log", "data_dir", *RUN_SECTIONS}


@dataclass(frozen=True)
class Fate:
    """What apollo does with one reference key."""

    sets: tuple[str, ...] = ()
    """The apollo settings it sets (``models.<role>`` for a model block's keys)."""
    ignored: str = ""
    """Why it is accepted without effect (only for keys with no apollo counterpart)."""
    accepts: Callable[[Any], bool] | None = None
    """Values accepted; any other is refused with ``refused``."""
    refused: str = ""


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
RAG_CHAT_KEYS = {"chat_base_url": "base_url", "chat_model": "model", "chat_timeout": "timeout"}
ND_MEMORY_KEYS = {"scored_history_length": "scored_history_length", "strategy": "retrieval",
                  "memory_type": "solution_memory"}
CONCURRENCY_KEYS = ("verifier_max_workers", "problem_max_workers", "branch_max_workers")
DATASET_RUN_KEYS = ("data_root", "dataset_name", "file_name")
"""Joined into the dataset path as the reference does (``engine.cli.dataset_run``)."""

ENV_SECTIONS = ("informal_math_evolving", "informal_math", "informal_math_training")
"""The reference's ``env[.config].<section>`` blocks; table paths write them ``<section>``."""
MODEL_BLOCK = "<model>"
"""Table paths of a model block's keys: ``policy_model_cfg``, ``verifier_cfg``,
``default_verifier_cfg`` and a branch's ``policy_model_cfg`` / ``verifier_cfg``."""


def _is_one(value: Any) -> bool:
    return value == 1 and not isinstance(value, bool)


def _informal_math(value: Any) -> bool:
    return isinstance(value, str) and "informal_math" in value.lower()


_ONE_POLICY = "apollo runs one policy episode per round, which is all the reference's code supports"
_ENV_NAME = Fate(
    ignored="selects the reference's informal-math environment, the only one apollo has",
    accepts=_informal_math,
    refused="apollo runs the informal-math environment only (as the reference's build_env, which refuses others)",
)

REFERENCE_KEYS: dict[str, Fate] = {
    # top level
    "preprocess": Fate(ignored="the reference's data-preparation step (download and convert a dataset "
                               "before a run); apollo reads JSONL or parquet directly (apollo run --dataset)"),
    "entrypoint_module": Fate(ignored="the module the reference's workflow wrapper starts; apollo's workflow "
                                      "is chosen with apollo run --workflow"),
    "base_config": Fate(sets=("(every setting of the named file, merged underneath)",)),
    "policy_model_cfg": Fate(sets=("models.policy",)),
    "verifier_cfg": Fate(sets=("models.verifier", "models.summarizer", "models.aggregator")),
    "default_verifier_cfg": Fate(sets=("evolve.default_verifier",)),
    "branch_max_workers": Fate(sets=("evolve.branch_max_workers",)),
    "branches": Fate(sets=("branches",)),
    "branches[].branch_id": Fate(sets=("branches[].branch_id",)),
    "branches[].policy_model_cfg": Fate(sets=("branches[].policy",)),
    "branches[].verifier_cfg": Fate(sets=("branches[].verifier",)),
    **{f"{MODEL_BLOCK}.{key}": Fate(sets=(f"models.<role>.{target}",)) for key, target in MODEL_KEYS.items()},
    # run
    "run.evolving_round": Fate(sets=("evolve.rounds",)),
    "run.test_times": Fate(sets=("evolve.test_times",)),
    "run.verifier_env_num": Fate(sets=("evolve.verifiers",)),
    **{f"run.{key}": Fate(sets=(f"dataset.{key}",)) for key in DATASET_RUN_KEYS},
    "run.tag": Fate(ignored="names the reference's output folder (outputs/<dataset>/<tag>/...); apollo writes "
                            "results where apollo run --out says"),
    "run.policy_env_num": Fate(ignored=_ONE_POLICY, accepts=_is_one,
                               refused=f"only 1: {_ONE_POLICY}; use --samples for more attempts per problem"),
    # env (the same keys are accepted under env.config)
    "env.name": _ENV_NAME,
    "env.env_name": _ENV_NAME,
    "env.group_n": Fate(ignored="1 copy of each problem's environment, which is what apollo runs", accepts=_is_one,
                        refused="only 1: apollo's samples per problem are --samples or env.rollout.n"),
    "env.seed": Fate(ignored="seeds the reference's environment objects, whose math episodes draw no random "
                             "numbers; apollo's only randomness is the model server's sampling"),
    "env.resources_per_worker": Fate(ignored="Ray resources of the reference's environment workers, read and "
                                             "never used by the reference itself; apollo runs no Ray workers"),
    "env.rollout.n": Fate(sets=("dataset.samples",)),
    "env.memory_type": Fate(sets=("evolve.step_memory",)),
    **{f"env.{key}": Fate(sets=(f"episode.{target}",)) for key, target in EPISODE_KEYS.items()},
    # env[.config].<section>
    "env.<section>.log_requests": Fate(ignored="apollo's event log records every model request and reply "
                                               "whatever this says (replay needs them)"),
    "env.<section>.execution_mode": Fate(
        ignored="the reference checks its value and never reads it again (no behaviour depends on it)",
        accepts=lambda value: value in ("agentic", "mechanical"),
        refused="the reference accepts only agentic or mechanical"),
    "env.<section>.evolving_round": Fate(sets=("evolve.rounds",)),
    "env.<section>.enable_verify": Fate(sets=("evolve.enable_verify",)),
    "env.<section>.memory_type": Fate(sets=("evolve.step_memory",)),
    **{f"env.<section>.{key}": Fate(sets=(f"episode.{target}",)) for key, target in EPISODE_KEYS.items()},
    "env.<section>.policy_env.memory_type": Fate(sets=("evolve.step_memory",)),
    **{f"env.<section>.policy_env.{key}": Fate(sets=(f"episode.{target}",)) for key, target in EPISODE_KEYS.items()},
    "env.<section>.verifier_env.memory_type": Fate(sets=("evolve.verifier_episode.memory_type",)),
    **{f"env.<section>.verifier_env.{key}": Fate(sets=(f"evolve.verifier_episode.{target}",))
       for key, target in EPISODE_KEYS.items()},
    **{f"env.<section>.nd_memory.{key}": Fate(sets=(f"evolve.{target}",)) for key, target in ND_MEMORY_KEYS.items()},
    **{f"env.<section>.concurrency.{key}": Fate(sets=(f"evolve.{key}",)) for key in CONCURRENCY_KEYS},
    "env.<section>.rag": Fate(sets=("episode.rag_rewrite_query", "episode.rag_summarize")),
    "env.<section>.rag.rag_base_url": Fate(ignored="the URL of the reference's retrieval service; apollo "
                                                   "searches its own index in process"),
    **{f"env.<section>.rag.{key}": Fate(sets=(f"models.rag_rewriter.{target}", f"models.rag_summarizer.{target}"))
       for key, target in RAG_CHAT_KEYS.items()},
}


def fate(path: str, where: str, value: Any) -> Fate:
    """The fate of the key at table ``path`` (``where``: as the config spells it).

    Raises:
        ConfigError: the key is not in the table, or its value is one apollo refuses.
    """
    found = REFERENCE_KEYS.get(path)
    if found is None:
        msg = f"invalid config: unknown key {where}"
        raise ConfigError(msg)
    if found.accepts is not None and not found.accepts(value):
        msg = f"invalid config: {where}: {value!r} is refused: {found.refused}"
        raise ConfigError(msg)
    return found


def translate(raw: Mapping[str, Any]) -> dict[str, Any]:
    """Rewrite reference-style keys into apollo's layout; apollo keys pass through."""
    out: dict[str, Any] = {}
    for key, value in raw.items():
        if key == "branches" and isinstance(value, list):
            out["branches"] = [_branch(item, index) for index, item in enumerate(value)]
            continue
        if key in APOLLO_SECTIONS or key == "plugins":
            if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
                _merge(out, {key: dict(value)})  # apollo keys lay over translated ones
            else:
                out[key] = value
            continue
        if key == "run" and isinstance(value, Mapping):
            _merge(out, _run_section(value))
            continue
        if key == "env" and isinstance(value, Mapping):
            _merge(out, _env_section(value, "env"))
            continue
        if key not in REFERENCE_KEYS:
            out[key] = value  # validation names it as unknown
            continue
        if fate(key, key, value).ignored:
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
        else:
            out[key] = value  # a wrong type: validation names it
    return out


def model_settings(value: Any, where: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        msg = f"invalid config: {where} must be a mapping"
        raise ConfigError(msg)
    settings: dict[str, Any] = {}
    for key, item in value.items():
        fate(f"{MODEL_BLOCK}.{key}", f"{where}.{key}", item)
        settings[MODEL_KEYS[key]] = item
    return settings


def _branch(item: Any, index: int) -> dict[str, Any]:
    where = f"branches[{index}]"
    if not isinstance(item, Mapping):
        msg = f"invalid config: {where} must be a mapping"
        raise ConfigError(msg)
    branch: dict[str, Any] = {"branch_id": str(item.get("branch_id", f"branch-{index}"))}
    for key, value in item.items():
        if key in ("policy", "verifier"):  # apollo's own layout
            branch[key] = value
            continue
        fate(f"branches[].{key}", f"{where}.{key}", value)
        if key != "branch_id":
            branch[key.removesuffix("_model_cfg").removesuffix("_cfg")] = model_settings(value, f"{where}.{key}")
    return branch


def _run_section(run: Mapping[str, Any]) -> dict[str, Any]:
    evolve: dict[str, Any] = {}
    dataset: dict[str, Any] = {}
    for key, value in run.items():
        if fate(f"run.{key}", f"run.{key}", value).ignored:
            continue
        if key in DATASET_RUN_KEYS:
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                msg = f"invalid config: run.{key} must be text (part of the dataset path), got {value!r}"
                raise ConfigError(msg)
            dataset[key] = str(value)
        elif key == "evolving_round":
            evolve["rounds"] = value
        elif key == "test_times":
            evolve["test_times"] = value
        elif key == "verifier_env_num":
            evolve["verifiers"] = value
    return {"evolve": evolve, "dataset": dataset} if dataset else {"evolve": evolve}


def _env_section(env: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``env`` or ``env.config`` (the reference reads the same keys at both levels)."""
    out: dict[str, Any] = {}
    for key, value in env.items():
        here = f"{where}.{key}"
        if key in ("config", "rollout", *ENV_SECTIONS):
            _require_mapping(value, here)
        if key == "config" and where == "env" and isinstance(value, Mapping):
            _merge(out, _env_section(value, here))
        elif key in ENV_SECTIONS and isinstance(value, Mapping):
            _merge(out, _evolving_section(value, here))
        elif key == "rollout" and isinstance(value, Mapping):
            _merge(out, _rollout_section(value, here))
        elif fate(f"env.{key}", here, value).ignored:
            continue
        elif key in EPISODE_KEYS:
            _merge(out, {"episode": {EPISODE_KEYS[key]: value}})
        elif key == "memory_type":
            _merge(out, {"evolve": {"step_memory": value}})
    return out


def _rollout_section(rollout: Mapping[str, Any], where: str) -> dict[str, Any]:
    """``env.rollout.n``: samples per problem, the GRPO group size (``n <= 0`` means 1, as in the reference)."""
    out: dict[str, Any] = {}
    for key, value in rollout.items():
        fate(f"env.rollout.{key}", f"{where}.{key}", value)
        if isinstance(value, bool) or not isinstance(value, int):
            msg = f"invalid config: {where}.n must be a whole number, got {value!r}"
            raise ConfigError(msg)
        out = {"dataset": {"samples": max(1, value)}}
    return out


def _evolving_section(section: Mapping[str, Any], where: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in section.items():
        here = f"{where}.{key}"
        if key in SUBSECTIONS:
            _merge(out, _subsection(key, _require_mapping(value, here), here))
        elif fate(f"env.<section>.{key}", here, value).ignored:
            continue
        elif key == "evolving_round":
            _merge(out, {"evolve": {"rounds": value}})
        elif key == "enable_verify":
            _merge(out, {"evolve": {"enable_verify": value}})
        elif key in EPISODE_KEYS:
            _merge(out, {"episode": {EPISODE_KEYS[key]: value}})
        elif key == "memory_type":
            _merge(out, {"evolve": {"step_memory": value}})
    return out


SUBSECTIONS = ("policy_env", "verifier_env", "nd_memory", "concurrency", "rag")


def _require_mapping(value: Any, where: str) -> Mapping[str, Any]:
    if not isinstance(value, Mapping):
        msg = f"invalid config: {where} must be a mapping"
        raise ConfigError(msg)
    return value


def _subsection(name: str, section: Mapping[str, Any], where: str) -> dict[str, Any]:
    """One block of an env section: every key checked against the table, then mapped."""
    values: dict[str, Any] = {}
    ignored: set[str] = set()
    for key, value in section.items():
        if fate(f"env.<section>.{name}.{key}", f"{where}.{key}", value).ignored:
            ignored.add(key)
        else:
            values[key] = value
    if name == "policy_env":
        episode = {EPISODE_KEYS[k]: v for k, v in values.items() if k in EPISODE_KEYS}
        step = {"step_memory": values["memory_type"]} if "memory_type" in values else {}
        return {"episode": episode, "evolve": step}
    if name == "verifier_env":
        return {"evolve": {"verifier_episode": {EPISODE_KEYS.get(k, k): v for k, v in values.items()}}}
    if name == "nd_memory":
        return {"evolve": {ND_MEMORY_KEYS[k]: v for k, v in values.items()}}
    if name == "concurrency":
        return {"evolve": {k: _reference_workers(k, v) for k, v in values.items()}}
    return _rag(values)


def _reference_workers(key: str, value: Any) -> Any:
    """The reference's 0 runs problems (or verifiers) one at a time; apollo's 0 means no cap."""
    sequential = key in ("verifier_max_workers", "problem_max_workers")
    return 1 if sequential and value == 0 and not isinstance(value, bool) else value


def _rag(chat_keys: Mapping[str, Any]) -> dict[str, Any]:
    """The reference's retrieval chat model rewrites every query and summarises every result."""
    chat = {RAG_CHAT_KEYS[k]: v for k, v in chat_keys.items()}
    out: dict[str, Any] = {"episode": {"rag_rewrite_query": True, "rag_summarize": True}}
    if chat:
        out["models"] = {"rag_rewriter": dict(chat), "rag_summarizer": dict(chat)}
    return out


def _merge(out: dict[str, Any], extra: dict[str, Any]) -> None:
    merged = deep_merge(out, extra)
    out.clear()
    out.update(merged)
