"""`apollo run` flags and the dataset keys of reference configs: garbage refused, each key acting."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from engine.cli.dataset_run import dataset_path, samples_per_problem, with_sampling_flags
from engine.cli.main import build_parser, main
from engine.config.settings import load_settings
from engine.errors import ConfigError, EngineError


def _args(*extra: str) -> argparse.Namespace:
    return build_parser().parse_args(["run", "--dataset", "x.jsonl", *extra])


def _settings(tmp_path: Path, text: str) -> object:
    path = tmp_path / "config.yaml"
    path.write_text(text)
    return load_settings(path, environ={})


@pytest.mark.parametrize(("flag", "value"), [
    ("--temperature", "-0.1"), ("--temperature", "hot"), ("--temperature", "nan"), ("--temperature", "inf"),
    ("--top-p", "0"), ("--top-p", "1.5"), ("--top-p", "-1"), ("--top-p", "x"),
    ("--top-k", "0"), ("--top-k", "-2"), ("--top-k", "2.5"), ("--top-k", ""),
    ("--max-tokens", "0"), ("--max-tokens", "1e3"), ("--samples", "0"), ("--samples", "many"),
])  # fmt: skip
def test_garbage_flag_values_are_usage_errors(flag: str, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A bad sampling or samples value exits 2 with argparse's usage line naming the option."""
    with pytest.raises(SystemExit) as exit_info:
        main(["run", "--dataset", "x.jsonl", flag, value])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {flag}" in err
    assert "Traceback" not in err


def test_sampling_flags_override_the_policy_model(tmp_path: Path) -> None:
    """--temperature/--top-p/--top-k/--max-tokens replace the policy's values, nothing else."""
    settings = _settings(tmp_path, "policy_model_cfg:\n  model_name: m\n  temperature: 0.7\n  max_tokens: 100\n")
    args = _args("--temperature", "0.6", "--top-p", "0.95", "--top-k", "20")
    policy = with_sampling_flags(settings, args).model_for("policy")  # type: ignore[arg-type]
    assert (policy.model, policy.temperature, policy.top_p, policy.top_k, policy.max_tokens) == (
        "m", 0.6, 0.95, 20, 100)
    assert with_sampling_flags(settings, _args()) is settings  # type: ignore[arg-type]


def test_env_rollout_n_sets_samples_per_problem(tmp_path: Path) -> None:
    """env.rollout.n is the samples per problem (GRPO group size); --samples wins; n <= 0 means 1."""
    settings = _settings(tmp_path, "env:\n  rollout:\n    n: 8\n")
    assert samples_per_problem(_args(), settings) == 8  # type: ignore[arg-type]
    assert samples_per_problem(_args("--samples", "3"), settings) == 3  # type: ignore[arg-type]
    assert samples_per_problem(_args(), _settings(tmp_path, "env:\n  rollout:\n    n: 0\n")) == 1  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match=r"env\.rollout\.n must be a whole number"):
        _settings(tmp_path, "env:\n  rollout:\n    n: many\n")
    with pytest.raises(ConfigError, match=r"env\.rollout\.temperature"):
        _settings(tmp_path, "env:\n  rollout:\n    temperature: 1\n")


def test_run_test_times_sets_samples_of_evolve_runs(tmp_path: Path) -> None:
    """run.test_times (evolve.test_times) is the samples per problem of evolve runs only."""
    settings = _settings(tmp_path, "run:\n  test_times: 3\n")
    assert samples_per_problem(_args("--workflow", "evolve"), settings) == 3  # type: ignore[arg-type]
    assert samples_per_problem(_args("--workflow", "evolve", "--samples", "2"), settings) == 2  # type: ignore[arg-type]
    assert samples_per_problem(_args(), settings) == 1  # type: ignore[arg-type]
    apollo_style = _settings(tmp_path, "evolve:\n  test_times: 4\n")
    assert samples_per_problem(_args("--workflow", "evolve"), apollo_style) == 4  # type: ignore[arg-type]


def test_run_data_root_dataset_name_file_name_name_the_dataset(tmp_path: Path) -> None:
    """Without --dataset the file is data_root/dataset_name/file_name; --dataset wins."""
    settings = _settings(tmp_path, "run:\n  data_root: ./data/math-ai/\n  dataset_name: aime24\n"
                                   "  file_name: test.parquet\n")
    no_flag = build_parser().parse_args(["run"])
    assert dataset_path(no_flag, settings) == (  # type: ignore[arg-type]
        str(Path("data/math-ai/aime24/test.parquet")), "run.data_root/dataset_name/file_name")
    assert dataset_path(_args(), settings)[0] == "x.jsonl"  # type: ignore[arg-type]


def test_part_of_a_dataset_path_or_none_is_one_clear_error(tmp_path: Path) -> None:
    """A path with a missing part, or no dataset at all, names what is missing."""
    no_flag = build_parser().parse_args(["run"])
    partial = _settings(tmp_path, "run:\n  data_root: ./data\n  file_name: test.parquet\n")
    with pytest.raises(EngineError, match=r"run\.dataset_name missing"):
        dataset_path(no_flag, partial)  # type: ignore[arg-type]
    with pytest.raises(EngineError, match="no dataset: give --dataset FILE"):
        dataset_path(no_flag, load_settings(None, environ={}))


def test_a_missing_dataset_file_from_the_config_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The reference keys point at a file that is not there: exit 1, one line naming the keys."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("APOLLO_DATA_DIR", str(tmp_path / "data"))
    config = tmp_path / "c.yaml"
    config.write_text("run:\n  data_root: ./nowhere\n  dataset_name: aime24\n  file_name: test.parquet\n")
    assert main(["--config", str(config), "run"]) == 1
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0
    assert err == ("apollo: error: dataset file not found: nowhere/aime24/test.parquet "
                   "(from run.data_root/dataset_name/file_name)")


@pytest.mark.parametrize("value", ["[1]", "{a: 1}", "true"])
def test_dataset_path_keys_must_be_text(tmp_path: Path, value: str) -> None:
    """run.data_root given a list, mapping or boolean is refused with the key named."""
    with pytest.raises(ConfigError, match=r"run\.data_root must be text"):
        _settings(tmp_path, f"run:\n  data_root: {value}\n")
