"""`apollo rollouts` and `apollo policy-sync` as a user runs them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.support import apollo


def _dataset(tmp_path: Path, rows: int) -> Path:
    path = tmp_path / "toy.jsonl"
    path.write_text("".join(json.dumps({"id": f"t{i}", "question": f"What is {i} + 2 - {i}?", "answer": "2"}) + "\n"
                            for i in range(rows)))
    return path


def _script(tmp_path: Path) -> Path:
    path = tmp_path / "two.json"
    path.write_text(json.dumps({"rules": [{"reply": "<answer>\\boxed{2}</answer>"}]}))
    return path


@pytest.mark.nats
def test_rollouts_submits_every_group_and_keeps_the_bound(tmp_path: Path) -> None:
    """Rollouts submits every group while keeping open groups within --max-in-flight."""
    code, out, err = apollo(tmp_path / "data", "rollouts", "--dataset", str(_dataset(tmp_path, 3)), "--samples", "2",
                            "--max-in-flight", "1", "--model", f"scripted:{_script(tmp_path)}", "--json")
    assert code == 0, err[-2000:]
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary == {"groups": 3, "runs": 6, "runs_failed": 0, "max_open_groups": 1, "versions": [None],
                       "recorded_before": 0}
    assert "apollo rollouts: 3/3 groups ended, 0 open, 0 runs failed" in err  # the final progress line


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--samples", "0", "--max-in-flight", "1"], "--samples"),
        (["--samples", "2", "--max-in-flight", "many"], "--max-in-flight"),
        (["--samples", "2"], "--max-in-flight"),
        (["--samples", "2", "--max-in-flight", "1", "--prefix", "a.b"], "run prefix 'a.b'"),
    ],
)
def test_rollouts_refuses_garbage_options_in_one_line(tmp_path: Path, args: list[str], message: str) -> None:
    """Rollouts refuses invalid options with a one-line message and no traceback."""
    code, _, err = apollo(tmp_path / "data", "rollouts", "--dataset", str(_dataset(tmp_path, 1)), *args)
    assert code != 0
    assert message in err
    assert "Traceback" not in err


def test_rollouts_names_a_missing_dataset(tmp_path: Path) -> None:
    """Rollouts names a missing dataset file and exits 1 without a traceback."""
    code, _, err = apollo(tmp_path / "data", "rollouts", "--dataset", str(tmp_path / "nope.jsonl"), "--samples", "1",
                          "--max-in-flight", "1")
    assert code == 1
    assert "nope.jsonl" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "one of the arguments --lora-url --reload-url --reload-command is required"),
        (["--lora-url", "http://x/v1", "--reload-url", "http://y"], "not allowed with argument"),
        (["--reload-command", "   "], "--reload-command is empty"),
        (["--reload-command", "reload 'unclosed"], "cannot be split into words"),
    ],
)
def test_policy_sync_wants_exactly_one_usable_way_to_reload(tmp_path: Path, args: list[str], message: str) -> None:
    """Policy-sync refuses unless given exactly one usable way to reload, without a traceback."""
    code, _, err = apollo(tmp_path / "data", "policy-sync", *args)
    assert code != 0
    assert message in err
    assert "Traceback" not in err
