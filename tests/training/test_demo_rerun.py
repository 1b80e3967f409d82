"""Running `apollo train --demo` again on a finished --out says nothing was trained, without loading the model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from engine.training.checkpoint import LATEST, CheckpointState
from engine.training.model_package import ModelPackageMissing, require_libraries
from replay.training import TrainingCursor

REPO = Path(__file__).resolve().parents[2]


def _finished_demo(out: Path, steps: int) -> None:
    """What a demo that trained ``steps`` steps leaves: its latest checkpoint record and a metrics line per step."""
    (out / "checkpoints").mkdir(parents=True)
    state = CheckpointState(step=steps, version=steps, folder=f"step-{steps:04d}", cursor=TrainingCursor())
    (out / "checkpoints" / LATEST).write_bytes(msgspec.json.encode(state))
    (out / "metrics.jsonl").write_text("".join(
        json.dumps({"step": step, "reward_mean": step / 10, "loss": 0.0}) + "\n" for step in range(1, steps + 1)))


def test_a_finished_demo_run_again_trains_nothing_and_says_so(tmp_path: Path) -> None:
    """The same command after 2 of 2 steps: 'nothing to train', not 'trained 2 steps'; a larger --steps is named."""
    try:
        require_libraries()
    except ModelPackageMissing as exc:
        pytest.skip(str(exc))
    out = tmp_path / "demo"
    _finished_demo(out, 2)
    done = subprocess.run([sys.executable, "-m", "engine", "train", "--demo", "--steps", "2", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    first = done.stdout.splitlines()[0]
    assert first.startswith("nothing to train: 2 steps were already trained in an earlier run (--steps 2; a larger")
    assert "trained 2 steps" not in done.stdout and "rollouts" not in done.stderr
    assert (out / "reward.png").exists()


def test_one_step_is_named_in_the_singular(tmp_path: Path) -> None:
    """After a 1-step demo, the same command says '1 step was', not '1 steps were'."""
    try:
        require_libraries()
    except ModelPackageMissing as exc:
        pytest.skip(str(exc))
    out = tmp_path / "demo"
    _finished_demo(out, 1)
    done = subprocess.run([sys.executable, "-m", "engine", "train", "--demo", "--steps", "1", "--out", str(out)],
                          cwd=REPO, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("nothing to train: 1 step was already trained in an earlier run (--steps 1;")
