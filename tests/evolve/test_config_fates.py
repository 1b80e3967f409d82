"""No setting accepted and ignored (issue 21 §3): every key is used, refused, or ignored for a stated reason.

Two walks. Every reference key in ``engine.config.reference.REFERENCE_KEYS`` is loaded
from a config file: a mapped key must land on the apollo settings its fate names, an
ignored key must change nothing, a refused value must be a one-line error naming the key.
Every apollo setting (each leaf of ``engine.config.settings.Settings``) must name the module that
reads it, and that module must mention it. A new key in either place fails here until
its fate is written down.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec
import pytest
import yaml

from engine.config.reference import (
    ENV_SECTIONS,
    MODEL_BLOCK,
    REFERENCE_KEYS,
)
from engine.config.settings import ModelSettings, Settings, load_settings
from engine.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]

EPISODE_SAMPLES = {"max_steps": 7, "history_length": 2, "enable_python_code": False,
                   "enable_local_rag": True, "python_code_timeout": 11.0}
MODEL_SAMPLES = {"model_name": ("m-x", "model"), "model": ("m-y", "model"), "base_url": ("http://h:1/v1", "base_url"),
                 "api_key": ("k-1", "api_key"), "temperature": (0.3, "temperature"), "top_p": (0.5, "top_p"),
                 "top_k": (7, "top_k"), "max_tokens": (99, "max_tokens"),
                 "system_prompt": ("be brief", "system_prompt"), "timeout": (12.0, "timeout"),
                 "max_retries": (2, "max_retries")}

MAPPED: dict[str, tuple[Any, dict[str, Any]]] = {
    "policy_model_cfg": ({"model_name": "p"}, {"models.policy.model": "p"}),
    "verifier_cfg": ({"model_name": "v"}, {f"models.{r}.model": "v" for r in ("verifier", "summarizer", "aggregator")}),
    "default_verifier_cfg": ({"model_name": "d"}, {"evolve.default_verifier.model": "d"}),
    "branch_max_workers": (2, {"evolve.branch_max_workers": 2}),
    "branches": ([{"branch_id": "x"}], {"branches.0.branch_id": "x"}),
    "branches[].branch_id": ("y", {"branches.0.branch_id": "y"}),
    "branches[].policy_model_cfg": ({"model_name": "bp"}, {"branches.0.policy.model": "bp"}),
    "branches[].verifier_cfg": ({"model_name": "bv"}, {"branches.0.verifier.model": "bv"}),
    **{f"{MODEL_BLOCK}.{k}": (v, {f"models.policy.{field}": v}) for k, (v, field) in MODEL_SAMPLES.items()},
    "run.evolving_round": (6, {"evolve.rounds": 6}),
    "run.test_times": (3, {"evolve.test_times": 3}),
    "run.verifier_env_num": (7, {"evolve.verifiers": 7}),
    "run.data_root": ("data/", {"dataset.data_root": "data/"}),
    "run.dataset_name": ("aime24", {"dataset.dataset_name": "aime24"}),
    "run.file_name": ("test.parquet", {"dataset.file_name": "test.parquet"}),
    "env.rollout.n": (4, {"dataset.samples": 4}),
    "env.memory_type": ("simple", {"evolve.step_memory": "simple"}),
    **{f"env.{k}": (v, {f"episode.{k}": v}) for k, v in EPISODE_SAMPLES.items()},
    "env.<section>.evolving_round": (5, {"evolve.rounds": 5}),
    "env.<section>.enable_verify": (False, {"evolve.enable_verify": False}),
    "env.<section>.memory_type": ("simple", {"evolve.step_memory": "simple"}),
    **{f"env.<section>.{k}": (v, {f"episode.{k}": v}) for k, v in EPISODE_SAMPLES.items()},
    "env.<section>.policy_env.memory_type": ("simple", {"evolve.step_memory": "simple"}),
    **{f"env.<section>.policy_env.{k}": (v, {f"episode.{k}": v}) for k, v in EPISODE_SAMPLES.items()},
    "env.<section>.verifier_env.memory_type": ("simple", {"evolve.verifier_episode.memory_type": "simple"}),
    **{f"env.<section>.verifier_env.{k}": (v, {f"evolve.verifier_episode.{k}": v}) for k, v in EPISODE_SAMPLES.items()},
    "env.<section>.nd_memory.scored_history_length": (2, {"evolve.scored_history_length": 2}),
    "env.<section>.nd_memory.strategy": ("random", {"evolve.retrieval": "random"}),
    "env.<section>.nd_memory.memory_type": ("score", {"evolve.solution_memory": "score"}),
    "env.<section>.concurrency.verifier_max_workers": (3, {"evolve.verifier_max_workers": 3}),
    "env.<section>.concurrency.problem_max_workers": (4, {"evolve.problem_max_workers": 4}),
    "env.<section>.concurrency.branch_max_workers": (2, {"evolve.branch_max_workers": 2}),
    "env.<section>.rag": ({}, {"episode.rag_rewrite_query": True, "episode.rag_summarize": True}),
    "env.<section>.rag.chat_base_url": ("http://c:1/v1", {f"models.{r}.base_url": "http://c:1/v1"
                                                           for r in ("rag_rewriter", "rag_summarizer")}),
    "env.<section>.rag.chat_model": ("chat", {f"models.{r}.model": "chat" for r in ("rag_rewriter", "rag_summarizer")}),
    "env.<section>.rag.chat_timeout": (9.0, {f"models.{r}.timeout": 9.0 for r in ("rag_rewriter", "rag_summarizer")}),
}
TESTED_ELSEWHERE = {"base_config": "tests/evolve/test_base_config.py"}
IGNORED_SAMPLES: dict[str, Any] = {
    "preprocess": [{"name": "prepare_evolving_data", "args": {"data_source": "math-ai/aime24"}}],
    "entrypoint_module": "alphaapollo.core.generation.evolving.evolving_main",
    "run.tag": "default",
    "run.policy_env_num": 1,
    "env.name": "informal_math_evolving",
    "env.env_name": "informal_math_training",
    "env.group_n": 1,
    "env.seed": 42,
    "env.resources_per_worker": {"num_cpus": 0.1},
    "env.<section>.log_requests": True,
    "env.<section>.execution_mode": "agentic",
    "env.<section>.rag.rag_base_url": "http://localhost:10086",
}
REFUSED_SAMPLES: dict[str, Any] = {
    "run.policy_env_num": 2,
    "env.name": "alfworld",
    "env.env_name": "webshop",
    "env.group_n": 4,
    "env.<section>.execution_mode": "turbo",
}


def spelled(path: str, section: str = ENV_SECTIONS[0], under_config: bool = False) -> str:
    """The table path as a config file spells it."""
    path = path.replace(f"{MODEL_BLOCK}.", "policy_model_cfg.").replace("<section>", section)
    path = path.replace("branches[].", "branches[0].")
    return path.replace("env.", "env.config.", 1) if under_config and path.startswith("env.") else path


def config_for(path: str, value: Any, **where: Any) -> dict[str, Any]:
    """A config holding only ``value`` at the table ``path`` (the containers it needs around it)."""
    parts = spelled(path, **where).split(".")
    if parts[0] == "branches[0]":
        item = {"branch_id": "b0", parts[1]: value} if parts[1] != "branch_id" else {"branch_id": value}
        return {"branches": [item]}
    node: Any = value
    for part in reversed(parts):
        node = {part: node}
    return node


def load(tmp_path: Path, config: dict[str, Any]) -> Settings:
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config))
    return load_settings(path, environ={})


def setting(settings: Any, dotted: str) -> Any:
    node = settings
    for part in dotted.split("."):
        if isinstance(node, dict):
            node = node[part]
        elif isinstance(node, list):
            node = node[int(part)]
        else:
            node = getattr(node, part)
    return node


def flat(settings: Settings) -> dict[str, Any]:
    """Every leaf of the settings as ``dotted.name=value`` strings (for comparing two loads)."""
    out: dict[str, Any] = {}

    def walk(node: Any, prefix: str) -> None:
        if isinstance(node, dict) and node:
            for key, value in node.items():
                walk(value, f"{prefix}{key}.")
        else:
            out[f"{prefix[:-1]}={node!r}"] = node

    walk(msgspec.to_builtins(settings), "")
    return out


def block_of(dotted: str) -> str:
    """``models.policy`` of ``models.policy.model=...``: a model block a key creates whole."""
    parts = dotted.split("=")[0].split(".")
    return ".".join(parts[:2]) if parts[0] == "models" or parts[:2] == ["evolve", "default_verifier"] else dotted


def variants(path: str) -> list[dict[str, Any]]:
    """Every place the key may sit: each env section, directly under env and under env.config."""
    if not path.startswith("env."):
        return [{}]
    sections = ENV_SECTIONS if "<section>" in path else ENV_SECTIONS[:1]
    return [{"section": s, "under_config": c} for s in sections for c in (False, True)]


def test_every_fate_is_one_of_mapped_ignored_or_refused() -> None:
    """A key sets settings or says why it is ignored, never both or neither; refusals say why."""
    for path, fate in REFERENCE_KEYS.items():
        assert bool(fate.sets) != bool(fate.ignored), path
        assert (fate.accepts is None) == (not fate.refused), path
        if fate.ignored:
            assert len(fate.ignored) > 40, f"{path}: say why it has no effect in apollo"


@pytest.mark.parametrize("path", sorted(REFERENCE_KEYS))
def test_every_reference_key_acts_or_is_ignored_for_its_stated_reason(tmp_path: Path, path: str) -> None:
    """Mapped keys land on their settings; ignored keys change nothing (beyond the block around them)."""
    fate = REFERENCE_KEYS[path]
    if path in TESTED_ELSEWHERE:
        assert (ROOT / TESTED_ELSEWHERE[path]).is_file()
        return
    for where in variants(path):
        if fate.sets:
            assert path in MAPPED, f"{path}: add a sample value and the settings it must set"
            value, expected = MAPPED[path]
            settings = load(tmp_path, config_for(path, value, **where))
            for dotted, wanted in expected.items():
                assert setting(settings, dotted) == wanted, (path, where, dotted)
            container = path.rsplit(".", 1)[0] if "." in path else ""
            around = config_for(container, {}, **where) if container in REFERENCE_KEYS else {}
            changed = set(flat(settings)) - set(flat(load(tmp_path, around))) if "branches" not in path else set()
            blocks = {block_of(dotted) for dotted in expected}
            assert all(c.startswith(tuple(expected)) or block_of(c) in blocks for c in changed), (path, changed)
        else:
            assert path in IGNORED_SAMPLES, f"{path}: add a sample value"
            container = path.rsplit(".", 1)[0] if "." in path else None
            baseline = load(tmp_path, config_for(container, {}, **where)) if container else load(tmp_path, {})
            settings = load(tmp_path, config_for(path, IGNORED_SAMPLES[path], **where))
            assert settings == baseline, (path, where)


@pytest.mark.parametrize("path", sorted(p for p, f in REFERENCE_KEYS.items() if f.accepts is not None))
def test_values_apollo_cannot_honour_are_refused_naming_the_key(tmp_path: Path, path: str) -> None:
    """A value that would need behaviour apollo lacks is a one-line error naming the key and why."""
    assert path in REFUSED_SAMPLES, f"{path}: add a value it refuses"
    with pytest.raises(ConfigError, match="refused") as caught:
        load(tmp_path, config_for(path, REFUSED_SAMPLES[path]))
    assert spelled(path) in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"run": {"evolving_rounds": 3}}, "run.evolving_rounds"),
        ({"env": {"num_envs": 3}}, "env.num_envs"),
        ({"env": {"config": {"informal_math_evolving": {"concurrency": {"gpu_workers": 2}}}}},
         "concurrency.gpu_workers"),
        ({"env": {"config": {"informal_math": {"policy_env": {"temperature": 0.1}}}}}, "policy_env.temperature"),
        ({"env": {"rollout": {"m": 3}}}, "env.rollout.m"),
        ({"env": {"config": {"informal_math_evolving": {"rag": "yes"}}}}, "rag must be a mapping"),
        ({"env": {"informal_math": 3}}, "env.informal_math must be a mapping"),
        ({"verifier_cfg": {"model_name": "x", "n": 2}}, "verifier_cfg.n"),
        ({"branches": [{"branch_id": "a", "seed": 1}]}, r"branches\[0\].seed"),
        ({"log_requests": True}, "log_requests"),
    ],
)
def test_a_key_with_no_fate_fails_loudly(tmp_path: Path, config: dict[str, Any], key: str) -> None:
    """Keys that are neither used nor refused on purpose are errors naming them, at every level."""
    with pytest.raises(ConfigError, match=key):
        load(tmp_path, config)


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"env": {"memory_type": "score"}}, "step_memory"),
        ({"env": {"config": {"informal_math_evolving": {"verifier_env": {"memory_type": "search"}}}}}, "memory_type"),
        ({"evolve": {"final_answer": "best"}}, "final_answer"),
        ({"evolve": {"verifier_max_workers": -1}}, "verifier_max_workers"),
        ({"evolve": {"problem_max_workers": "many"}}, "problem_max_workers"),
    ],
)
def test_apollo_values_without_an_implementation_are_refused(tmp_path: Path, config: dict[str, Any], key: str) -> None:
    """Per-step memories other than the recent-steps window, unknown final-answer rules, bad worker counts."""
    with pytest.raises(ConfigError, match=key):
        load(tmp_path, config)


READERS: dict[str, str] = {
    "nats.url": "engine/app/bootstrap.py",
    "nats.store_dir": "engine/app/bootstrap.py",
    "nats.replicas": "engine/app/bootstrap.py",
    "nats.inline_limit": "engine/app/bootstrap.py",
    "nats.max_event_bytes": "engine/app/bootstrap.py",
    "nats.fsync_always": "engine/app/bootstrap.py",
    "nats.ack_wait": "engine/app/bootstrap.py",
    "nats.connect_timeout": "engine/app/bootstrap.py",
    **{f"nats.{key}": "engine/nats/security.py" for key in (
        "creds_file", "nkey_seed_file", "user", "password", "token", "ca_file", "cert_file", "key_file",
        "tls_hostname",
    )},
    "episode.max_steps": "handlers/episode/flow.py",
    "episode.history_length": "handlers/episode/flow.py",
    "episode.prompt_layout": "handlers/episode/flow.py",
    "episode.enable_python_code": "engine/tools/builtin_tools.py",
    "episode.enable_local_rag": "engine/tools/builtin_tools.py",
    "episode.python_code_timeout": "engine/tools/python_code.py",
    "episode.protocol": "handlers/episode/protocol.py",
    "episode.grading": "handlers/episode/effects.py",
    "episode.force_answer": "handlers/episode/flow.py",
    "episode.rag_top_k": "engine/tools/local_rag.py",
    "episode.rag_rewrite_query": "handlers/episode/retrieval.py",
    "episode.rag_summarize": "handlers/episode/retrieval.py",
    "episode.domain": "engine/plugins/run_settings.py",
    "episode.tools": "engine/plugins/run_settings.py",
    "episode.reward": "handlers/rewards.py",
    "episode.invalid_turn_penalty": "handlers/rewards.py",
    "episode.min_reward": "handlers/rewards.py",
    "evolve.rounds": "handlers/evolve/progress.py",
    "evolve.test_times": "engine/cli/dataset_run.py",
    "evolve.verifiers": "handlers/run_settings.py",
    "evolve.scored_history_length": "handlers/evolve/rounds.py",
    "evolve.solution_memory": "handlers/evolve/rounds.py",
    "evolve.retrieval": "handlers/evolve/rounds.py",
    "evolve.step_memory": "fixed: the recent-steps window, the only per-step memory; other values are refused",
    "evolve.enable_verify": "handlers/evolve/rounds.py",
    "evolve.summarize": "handlers/evolve/rounds.py",
    "evolve.aggregate": "handlers/evolve/verdict.py",
    "evolve.format_retries": "handlers/evolve/verification.py",
    "evolve.tie": "handlers/evolve/verdict.py",
    "evolve.final_answer": "handlers/evolve/progress.py",
    "evolve.verifier_episode.max_steps": "handlers/evolve/verification.py",
    "evolve.verifier_episode.history_length": "handlers/evolve/verification.py",
    "evolve.verifier_episode.enable_python_code": "handlers/run_settings.py",
    "evolve.verifier_episode.enable_local_rag": "handlers/run_settings.py",
    "evolve.verifier_episode.python_code_timeout": "handlers/run_settings.py",
    "evolve.verifier_episode.memory_type": "fixed: the recent-steps window; other values are refused",
    "evolve.default_verifier": "handlers/run_settings.py",
    "evolve.branch_max_workers": "handlers/evolve/plan.py",
    "evolve.verifier_max_workers": "handlers/run_settings.py",
    "evolve.problem_max_workers": "engine/cli/dataset_run.py",
    "branches": "handlers/evolve/plan.py",
    "dataset.path": "engine/cli/dataset_run.py",
    "dataset.data_root": "engine/cli/dataset_run.py",
    "dataset.dataset_name": "engine/cli/dataset_run.py",
    "dataset.file_name": "engine/cli/dataset_run.py",
    "dataset.samples": "engine/cli/dataset_run.py",
    "worker.concurrency": "engine/app/bootstrap.py",
    "worker.max_deliveries": "engine/app/bootstrap.py",
    "worker.workers": "engine/cli/serve.py",
    "grading.numeric_tolerance": "engine/app/bootstrap.py",
    "log.json": "engine/cli/main.py",
    "log.level": "engine/cli/main.py",
    "data_dir": "engine/config/settings.py",
    "plugins": "engine/plugins/loader.py",
    "models.model": "handlers/episode/model_choice.py",
    "models.base_url": "engine/models/router.py",
    "models.api_key": "engine/models/router.py",
    "models.temperature": "handlers/episode/model_choice.py",
    "models.top_p": "handlers/episode/model_choice.py",
    "models.top_k": "handlers/episode/model_choice.py",
    "models.max_tokens": "handlers/episode/model_choice.py",
    "models.timeout": "engine/models/router.py",
    "models.max_retries": "engine/models/router.py",
    "models.max_concurrency": "engine/models/router.py",
    "models.system_prompt": "handlers/episode/flow.py",
    "models.return_token_ids": "engine/models/router.py",
    "models.return_logprobs": "engine/models/router.py",
}


def leaves(struct: type, prefix: str = "") -> list[str]:
    """Dotted names of a settings struct's fields, descending into nested settings structs."""
    out = []
    for field in msgspec.structs.fields(struct):
        kind = field.type
        if isinstance(kind, type) and issubclass(kind, msgspec.Struct):
            out += leaves(kind, f"{prefix}{field.name}.")
        elif field.name == "models":
            out += leaves(ModelSettings, "models.")
        else:
            out.append(prefix + field.name)
    return out


@pytest.mark.parametrize("key", leaves(Settings))
def test_every_apollo_setting_has_a_reader(key: str) -> None:
    """Each setting names the module that reads it (and that module mentions it), or why it is fixed."""
    assert key in READERS, f"{key}: name the module that reads it in READERS (or why it has one value)"
    reader = READERS[key]
    if reader.startswith("fixed: "):
        return
    text = (ROOT / reader).read_text()
    assert key.rsplit(".", 1)[-1] in text, f"{reader} does not mention {key}"
