"""Metric trackers: CSV always (tested everywhere); TensorBoard and W&B offline when installed."""

from __future__ import annotations

import argparse
import csv
import importlib.util
from pathlib import Path

import pytest

from engine.cli.tracking import flat_numbers, open_trackers, parse_kinds
from engine.errors import EngineError

HAS_TENSORBOARD = bool(importlib.util.find_spec("tensorboard")) and bool(importlib.util.find_spec("torch"))
HAS_WANDB = bool(importlib.util.find_spec("wandb"))


def test_csv_has_a_row_per_step_and_widens_for_new_metrics(tmp_path: Path) -> None:
    """A metric first seen at a later step becomes a column; earlier rows leave it empty."""
    trackers = open_trackers(tmp_path / "m.csv")
    trackers.log(1, {"accuracy": 0.5})
    trackers.log(2, {"accuracy": 0.75, "reward": 1.0, "name": "not a number", "flag": True, "bad": float("nan")})
    trackers.close()
    rows = list(csv.DictReader((tmp_path / "m.csv").open()))
    assert rows == [{"step": "1", "accuracy": "0.5", "reward": ""}, {"step": "2", "accuracy": "0.75", "reward": "1.0"}]


def test_steps_never_go_back(tmp_path: Path) -> None:
    """A step below the last one is logged at the last one (W&B drops steps that go back)."""
    trackers = open_trackers(tmp_path / "m.csv")
    trackers.log(5, {"a": 1})
    trackers.log(3, {"a": 2})
    assert [row["step"] for row in csv.DictReader((tmp_path / "m.csv").open())] == ["5", "5"]


def test_nested_reports_become_named_scalars() -> None:
    """Dicts and lists flatten to a/b/0 names; strings and booleans are left out."""
    assert flat_numbers({"final": {"overall": {"accuracy": 0.5, "name": "x"}, "ks": [1, 2]}, "ok": True}) == {
        "final/overall/accuracy": 0.5, "final/ks/0": 1.0, "final/ks/1": 2.0}


@pytest.mark.parametrize("text", ["mlflow", "", "tensorboard,neptune", ","])
def test_unknown_trackers_are_refused(text: str) -> None:
    """--track accepts csv, tensorboard and wandb only, naming the bad one."""
    with pytest.raises(argparse.ArgumentTypeError, match="unknown tracker"):
        parse_kinds(text)


def test_tracker_kinds_are_deduplicated_and_csv_is_implied() -> None:
    """Names are case-insensitive, repeats collapse, and csv (always written) is not a separate tracker."""
    assert parse_kinds("TensorBoard, wandb,csv,wandb") == ["tensorboard", "wandb"]


def test_an_unwritable_csv_is_one_line(tmp_path: Path) -> None:
    """A metrics path under a file cannot be created: the error names it."""
    (tmp_path / "file").write_text("")
    with pytest.raises(EngineError, match="cannot write metrics to"):
        open_trackers(tmp_path / "file" / "m.csv")


@pytest.mark.skipif(not HAS_TENSORBOARD, reason="tensorboard or torch not installed ([tracking] extra)")
def test_tensorboard_event_file_holds_the_scalars(tmp_path: Path) -> None:
    """The event file TensorBoard reads has every logged scalar at its step."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    trackers = open_trackers(tmp_path / "m.csv", ["tensorboard"], name="t")
    trackers.log(1, {"accuracy": 0.5})
    trackers.log(2, {"accuracy": 0.75})
    trackers.close()
    events = EventAccumulator(str(tmp_path / "tracking" / "tensorboard" / "t"))
    events.Reload()
    assert [(e.step, e.value) for e in events.Scalars("accuracy")] == [(1, 0.5), (2, 0.75)]


@pytest.mark.skipif(not HAS_WANDB, reason="wandb not installed (pip install 'apollo-engine[tracking]')")
def test_wandb_writes_an_offline_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An offline run directory is written (for `wandb sync`); nothing goes to a network."""
    monkeypatch.setenv("WANDB_SILENT", "true")
    trackers = open_trackers(tmp_path / "m.csv", ["wandb"], name="t", config={"samples": 2})
    trackers.log(1, {"accuracy": 0.5})
    trackers.close()
    [run_dir] = (tmp_path / "tracking" / "wandb" / "wandb").glob("offline-run-*")
    assert list(run_dir.glob("*.wandb"))


def test_a_dataset_run_writes_its_metrics_csv(tmp_path: Path) -> None:
    """`apollo run` logs the running accuracy while it goes and the final metrics at the end, beside its results."""
    from tests.cli.support import DATASET, apollo

    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    out = tmp_path / "res" / "g.jsonl"
    code, _, err = apollo(tmp_path / "data", "run", "--dataset", str(DATASET), "--limit", "2", "--out", str(out))
    assert code == 0, err[-2000:]
    rows = list(csv.DictReader((tmp_path / "res" / "g-metrics.csv").open()))
    assert rows[-1]["step"] == "2" and rows[-1]["final/overall/samples"] == "2.0"
    assert any(row["accuracy"] for row in rows) and any(row["runs_finished"] == "2.0" for row in rows)
    code, _, err = apollo(tmp_path / "data", "run", "--dataset", str(DATASET), "--track", "mlflow")
    assert code == 2 and "unknown tracker 'mlflow'" in err


@pytest.mark.skipif(not (HAS_WANDB and HAS_TENSORBOARD), reason="wandb or tensorboard not installed ([tracking])")
def test_track_says_where_it_writes_and_a_resumed_run_logs_into_the_same_tracked_run(tmp_path: Path) -> None:
    """`--track` names its folders; running the command again (a resume) adds no new W&B run or TB folder."""
    from tests.cli.support import DATASET, apollo

    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    out = tmp_path / "res" / "g.jsonl"
    command = ["run", "--dataset", str(DATASET), "--limit", "1", "--out", str(out), "--track", "wandb,tensorboard"]
    errs = []
    for _ in range(2):
        code, _, err = apollo(tmp_path / "data", *command)
        assert code == 0, err[-2000:]
        errs.append(err)
    tracking = tmp_path / "res" / "tracking"
    assert f"apollo run: tracking to tensorboard: {tracking / 'tensorboard'}" in errs[0]
    [line] = [line for line in errs[0].splitlines() if "tracking to wandb" in line]
    assert f"offline under {tracking / 'wandb'} as run " in line
    run_id = line.split(" as run ")[1].split()[0]
    folders = sorted((tracking / "wandb" / "wandb").glob("offline-run-*"))
    assert len(folders) == 2
    assert all(folder.name.endswith(f"-{run_id}") for folder in folders)
    assert len(list((tracking / "tensorboard").iterdir())) == 1
