"""``base_config``: the named file is merged underneath, as the reference does (issue 21 §3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.config.settings import load_settings
from engine.errors import ConfigError


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_base_settings_survive_and_the_including_file_wins(tmp_path: Path) -> None:
    """Every setting of the base is kept; a setting in both files takes the including file's value."""
    write(tmp_path / "base.yaml", """
run: {evolving_round: 7, verifier_env_num: 3}
env: {config: {max_steps: 6, informal_math_evolving: {nd_memory: {scored_history_length: 2}}}}
policy_model_cfg: {model_name: base-model, temperature: 0.2}
""")
    top = write(tmp_path / "top.yaml", """
base_config: base.yaml
run: {verifier_env_num: 5}
policy_model_cfg: {temperature: 0.9}
""")
    settings = load_settings(top, environ={})
    assert (settings.evolve.rounds, settings.evolve.verifiers, settings.evolve.scored_history_length) == (7, 5, 2)
    assert settings.episode.max_steps == 6
    policy = settings.models["policy"]
    assert (policy.model, policy.temperature) == ("base-model", 0.9)


def test_relative_bases_resolve_from_the_including_files_folder_along_a_chain(tmp_path: Path) -> None:
    """A chain of three files in different folders: each relative path is read from its own file's folder."""
    write(tmp_path / "shared/root.toml", 'episode = { max_steps = 9, history_length = 1 }\n')
    write(tmp_path / "shared/mid.yaml", "base_config: root.toml\nepisode: {history_length: 2}\n")
    top = write(tmp_path / "runs/top.yaml", "base_config: ../shared/mid.yaml\nevolve: {rounds: 3}\n")
    settings = load_settings(top, environ={})
    assert (settings.episode.max_steps, settings.episode.history_length, settings.evolve.rounds) == (9, 2, 3)


def test_an_absolute_base_path_is_used_as_is(tmp_path: Path) -> None:
    """An absolute base_config does not depend on the including file's folder."""
    base = write(tmp_path / "elsewhere/base.yaml", "evolve: {verifiers: 7}\n")
    top = write(tmp_path / "top.yaml", f"base_config: {base}\n")
    assert load_settings(top, environ={}).evolve.verifiers == 7


@pytest.mark.parametrize(
    ("files", "message"),
    [
        ({"top.yaml": "base_config: missing.yaml\n"}, r"top\.yaml: base_config .*missing\.yaml does not exist"),
        ({"top.yaml": "base_config: top.yaml\n"}, r"top\.yaml: base_config top\.yaml leads back"),
        ({"top.yaml": "base_config: a.yaml\n", "a.yaml": "base_config: top.yaml\n"},
         r"a\.yaml: base_config top\.yaml leads back"),
        ({"top.yaml": "base_config: [a.yaml]\n"}, r"top\.yaml: base_config must be a file path"),
        ({"top.yaml": "base_config: ''\n"}, r"top\.yaml: base_config must be a file path"),
        ({"top.yaml": "base_config: b.yaml\n", "b.yaml": "- not a mapping\n"}, r"b\.yaml must contain a mapping"),
        ({"top.yaml": "base_config: b.yaml\n", "b.yaml": "run: {evolving_rounds: 3}\n"}, r"run\.evolving_rounds"),
    ],
)
def test_bad_bases_are_one_line_errors_naming_the_file(tmp_path: Path, files: dict[str, str], message: str) -> None:
    """A missing base, a cycle, a non-path value or a bad base file: a ConfigError naming it, in one line."""
    for name, text in files.items():
        write(tmp_path / name, text)
    with pytest.raises(ConfigError, match=message) as caught:
        load_settings(tmp_path / "top.yaml", environ={})
    assert "\n" not in str(caught.value)
