"""Evolve configuration: reference keys are accepted, garbage is an error naming the key."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config.settings import load_settings
from engine.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]


def load(tmp_path: Path, text: str):
    path = tmp_path / "c.yaml"
    path.write_text(text)
    return load_settings(path, environ={})


def test_single_model_example_maps_reference_keys() -> None:
    """The shipped single-model example loads with its reference keys translated."""
    settings = load_settings(ROOT / "examples/configs/evolve_single.yaml", environ={})
    assert (
        settings.evolve.rounds,
        settings.evolve.verifiers,
        settings.evolve.scored_history_length,
    ) == (3, 5, 3)
    assert settings.episode.max_steps == 4 and settings.evolve.verifier_episode.max_steps == 4
    assert settings.models["verifier"].temperature == 0.4


def test_multi_model_example_has_branches_and_a_default_verifier() -> None:
    """Branches, default_verifier_cfg and branch_max_workers are all honoured."""
    settings = load_settings(ROOT / "examples/configs/evolve_multi.yaml", environ={})
    assert [b.branch_id for b in settings.branches] == [
        "qwen25_branch_temp_0.7",
        "qwen3_branch_temp_0.7",
        "qwen3_branch_temp_1.0",
    ]
    assert settings.branches[0].verifier is not None and settings.branches[1].verifier is None
    assert settings.evolve.default_verifier is not None and settings.evolve.branch_max_workers == 3
    recorded = settings.run_settings()
    assert "api_key" not in str(recorded["branches"]) and "api_key" not in str(recorded["evolve"])


def test_reference_nested_layout_is_accepted(tmp_path: Path) -> None:
    """The reference's env.config.informal_math_evolving block maps onto evolve settings."""
    settings = load(
        tmp_path,
        """
env:
  config:
    informal_math_evolving:
      evolving_round: 7
      enable_verify: true
      concurrency: {verifier_max_workers: 5, problem_max_workers: 30, branch_max_workers: 2}
      nd_memory: {scored_history_length: 2}
      policy_env: {max_steps: 3, history_length: 2, memory_type: simple, enable_python_code: true}
      verifier_env: {max_steps: 2, history_length: 1, memory_type: simple, enable_python_code: false}
""",
    )
    assert (
        settings.evolve.rounds,
        settings.evolve.branch_max_workers,
        settings.evolve.scored_history_length,
    ) == (7, 2, 2)
    assert (
        settings.episode.max_steps == 3
        and settings.evolve.verifier_episode.enable_python_code is False
    )


def test_reference_rag_block_turns_on_rewrite_and_summary_with_its_chat_model(tmp_path: Path) -> None:
    """``rag:`` names the reference's retrieval chat model: it rewrites and summarises here too."""
    settings = load(
        tmp_path,
        """
env:
  config:
    informal_math:
      enable_local_rag: true
      rag: {rag_base_url: "http://localhost:10086", chat_base_url: "http://127.0.0.1:10089/v1",
            chat_model: Qwen/Qwen3-8B, chat_timeout: 60}
""",
    )
    assert settings.episode.enable_local_rag and settings.episode.rag_rewrite_query and settings.episode.rag_summarize
    for role in ("rag_rewriter", "rag_summarizer"):
        model = settings.model_for(role)
        assert (model.base_url, model.model, model.timeout) == ("http://127.0.0.1:10089/v1", "Qwen/Qwen3-8B", 60)
    assert settings.run_settings()["models"]["rag_rewriter"]["model"] == "Qwen/Qwen3-8B"


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("evolve: {roundz: 3}", "roundz"),
        ("evolve: {rounds: many}", "evolve.rounds"),
        ("evolve: {rounds: 0}", "evolve.rounds"),
        ("evolve: {tie: coin}", "evolve.tie"),
        ("evolve: {verifier_episode: {max_step: 3}}", "max_step"),
        ("run: {evolving_rounds: 3}", "run.evolving_rounds"),
        ("env: {config: {informal_math_evolving: {nd_memory: {size: 3}}}}", "nd_memory.size"),
        ("branches: [{branch_id: a, policy_cfg: {}}]", "branches[0].policy_cfg"),
        ("branches: [{branch_id: a}, {branch_id: a}]", "duplicate branch_id a"),
        ("policy_model_cfg: {model_name: x, temprature: 0.1}", "policy_model_cfg.temprature"),
        ("default_verifier_cfg: {model_name: 3}", "default_verifier.model"),
        ("branch_max_workers: -1", "evolve.branch_max_workers"),
        ("evolve: [1, 2]", "evolve"),
        ("env: {config: {informal_math: {rag: {chat_modle: x}}}}", "rag.chat_modle"),
        ("episode: {rag_summarize: maybe}", "episode.rag_summarize"),
    ],
)
def test_config_garbage_names_the_key(tmp_path: Path, text: str, key: str) -> None:
    """Unknown keys and wrong types are errors whose message names the key."""
    with pytest.raises(
        ConfigError, match=key.replace("[", r"\[").replace("]", r"\]").replace(".", r"\.?")
    ):
        load(tmp_path, text)


def test_verifier_tools_example_builds_on_the_single_model_one() -> None:
    """The base_config example keeps the base's settings and gives only the verifiers python."""
    settings = load_settings(ROOT / "examples/configs/evolve_verifier_tools.yaml", environ={})
    assert (settings.evolve.rounds, settings.evolve.verifiers, settings.models["verifier"].temperature) == (3, 5, 0.4)
    assert settings.episode.enable_python_code is False
    verifier = settings.evolve.verifier_episode
    assert (verifier.enable_python_code, verifier.python_code_timeout) == (True, 20)
    assert (settings.evolve.verifier_max_workers, settings.evolve.problem_max_workers) == (5, 4)


def test_multi_model_example_reports_the_reference_choice() -> None:
    """The K-branch example picks its final answer as the reference does."""
    assert load_settings(ROOT / "examples/configs/evolve_multi.yaml", environ={}).evolve.final_answer == "reference"
