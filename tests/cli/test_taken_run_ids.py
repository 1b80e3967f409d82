"""A run id the user names (`--run-id`, `rollouts --prefix`) that a recorded run holds already.

A submission under a recorded run's id is a no-op in the log, so `solve` used to print the
earlier run's question, model and grade as the answer to the new question (exit 0), `fork`
said it copied events it never copied, and a second `rollouts` with another model counted
the first one's runs as its own. Now another submission under a taken id is refused in one
line before anything is submitted, and the same submission again is said to be the recorded run.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli.engine_support import recorded, run_started, running_engine
from tests.cli.support import DATASET, apollo

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("apollo: error:")]


@pytest.fixture(scope="module")
def data(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir with one solved run, ``taken-1`` (What is 2+3?, the scripted demo, 1 step)."""
    data = tmp_path_factory.mktemp("taken") / "data"
    code, _, err = apollo(data, "solve", "What is 2+3?", "--answer", "5", "--run-id", "taken-1", "--max-steps", "1")
    assert code == 0, err[-2000:]
    return data


def test_solve_refuses_a_run_id_that_holds_another_question(data: Path) -> None:
    """Solve with a recorded run's id and another question refuses in one line and submits nothing."""
    before = recorded(data, "taken-1")
    code, out, err = apollo(data, "solve", "What is 7+3?", "--answer", "10", "--run-id", "taken-1")
    assert code == 1, out
    assert "grade:" not in out and "What is 2+3?" not in out
    (line,) = _errors(err)
    assert "run id 'taken-1' is taken" in line and "'What is 2+3?'" in line and "nothing was submitted" in line
    assert recorded(data, "taken-1") == before


def test_solve_refuses_a_run_id_recorded_with_other_settings(data: Path) -> None:
    """The same question under a taken id with another step budget is refused too, naming the settings."""
    code, out, err = apollo(data, "solve", "What is 2+3?", "--answer", "5", "--run-id", "taken-1", "--max-steps", "3",
                            "--json")
    assert code == 1, out
    assert out == ""
    (line,) = _errors(err)
    assert "run id 'taken-1' is taken" in line and "other settings (episode)" in line


def test_solve_with_the_same_submission_says_it_shows_the_recorded_run(data: Path) -> None:
    """The same solve again submits nothing and says that what follows is the recorded run."""
    code, out, err = apollo(data, "solve", "What is 2+3?", "--answer", "5", "--run-id", "taken-1", "--max-steps", "1")
    assert code == 0, err[-2000:]
    assert "run taken-1 was submitted before with this question and these settings: nothing was submitted again" \
        in err
    assert re.search(r"^run:\s+taken-1 \(completed", out, re.MULTILINE), out


def test_fork_refuses_a_run_id_a_recorded_run_holds(data: Path) -> None:
    """Fork --run-id naming a recorded run (its parent here) refuses instead of reporting that run as the fork."""
    before = recorded(data, "taken-1")
    code, out, err = apollo(data, "fork", "taken-1", "--at", "2", "--run-id", "taken-1")
    assert code == 1, out
    assert out == ""
    (line,) = _errors(err)
    assert "run id 'taken-1' is taken" in line and "no fork was made" in line
    assert recorded(data, "taken-1") == before


def test_rollouts_refuse_a_prefix_whose_runs_had_other_settings(tmp_path: Path) -> None:
    """A second rollouts under the same prefix with another config refuses; with the same settings it says so."""
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    data = tmp_path / "data"
    flags = ["rollouts", "--dataset", str(DATASET), "--limit", "1", "--samples", "2", "--max-in-flight", "1"]
    code, _, err = apollo(data, *flags)
    assert code == 0, err[-2000:]
    config = tmp_path / "settings.yaml"
    config.write_text("episode:\n  max_steps: 1\n")
    code, out, err = apollo(data, *flags, "--config", str(config))
    assert code == 1, out
    (line,) = _errors(err)
    assert "run id 'rollout-0-0-s0' is taken" in line and "other settings (episode)" in line
    assert "nothing was submitted" in line and "choose another --prefix" in line
    assert run_started(recorded(data, "rollout-0-0-s0"))["settings"]["episode"]["max_steps"] != 1
    code, out, err = apollo(data, *flags, "--json")
    assert code == 0, err[-2000:]
    assert json.loads(out)["recorded_before"] == 2
    assert "2 of 2 runs were submitted before under --prefix rollout" in err


def test_submit_to_a_running_engine_refuses_a_taken_run_id(tmp_path: Path) -> None:
    """Submit to `apollo up` with a recorded run's id and another question refuses and prints no run id."""
    data = tmp_path / "data"
    with running_engine(data):
        code, out, err = apollo(data, "submit", "What is 2+3?", "--answer", "5", "--run-id", "sub-1")
        assert (code, out.strip()) == (0, "sub-1"), err[-2000:]
        code, out, err = apollo(data, "submit", "What is 9+3?", "--answer", "12", "--run-id", "sub-1")
        assert code == 1 and out == "", err[-2000:]
        (line,) = _errors(err)
        assert "run id 'sub-1' is taken" in line and "'What is 2+3?'" in line
        submitted = recorded(data, "sub-1")[0]
        assert submitted["question"] == "What is 2+3?"


@pytest.mark.parametrize("command", [["solve", "What is 2+3?"], ["submit", "What is 2+3?"],
                                     ["fork", "taken-1", "--at", "2"]])
def test_a_run_id_that_cannot_be_one_is_a_usage_error(command: list[str], tmp_path: Path) -> None:
    """--run-id 'a b' is refused by the command's own parser before anything starts (fork named NATS's subject)."""
    code, out, err = apollo(tmp_path / "data", *command, "--run-id", "a b")
    assert (code, out) == (2, ""), err[-2000:]
    assert err.startswith(f"usage: apollo {command[0]} ")
    assert err.splitlines()[-1] == (f"apollo {command[0]}: error: argument --run-id: invalid run id 'a b': "
                                    "use letters, digits, '-' and '_' only")
    assert not (tmp_path / "data").exists()
