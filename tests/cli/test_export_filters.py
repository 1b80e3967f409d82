"""`apollo export` filters (run, dataset, model, workflow, time) and the model and ground truth in its rows."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import msgspec
import pytest

from engine.cli.main import main
from engine.testing.event_builders import started, submitted
from events import encode
from tests.cli.support import apollo
from tests.training.conftest import trajectory


def _events_file(tmp_path: Path) -> Path:
    """Three runs: two gsm8k (one reason, one evolve, a day apart) and one aime24, each with a trajectory.

    The first two start at 2025-01-01 00:00 UTC (the trajectories' time), the third a day later.
    """
    t0 = trajectory("a", 0).occurred_at
    runs = [("run-a-0", "gsm8k", "reason", "model-x", t0), ("run-b-0", "aime24", "reason", "model-y", t0),
            ("run-c-0", "gsm8k", "evolve", "model-x", t0 + timedelta(days=1))]
    events = []
    for run_id, source, workflow, model, at in runs:
        group = run_id.split("-")[1]
        events += [
            msgspec.structs.replace(submitted(run_id, data_source=source, workflow=workflow,
                                              ground_truth=f"gt-{group}"), occurred_at=at),
            msgspec.structs.replace(started(run_id, workflow=workflow,
                                            settings={"models": {"policy": {"model": model}}}), occurred_at=at),
            msgspec.structs.replace(trajectory(group, 0, data_source=source, model=model), occurred_at=at),
        ]
    path = tmp_path / "events.jsonl"
    path.write_text("".join(encode(event).decode() + "\n" for event in events))
    return path


def _export(tmp_path: Path, capsys: pytest.CaptureFixture[str], *flags: str) -> tuple[int, list[dict], str]:
    out = tmp_path / "out.jsonl"
    out.unlink(missing_ok=True)
    code = main(["export", "--format", "jsonl", "--out", str(out), "--events", str(_events_file(tmp_path)), *flags])
    rows = [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []
    return code, rows, capsys.readouterr().err


@pytest.mark.parametrize(("flags", "runs"), [
    ([], {"run-a-0", "run-b-0", "run-c-0"}),
    (["--dataset", "gsm8k"], {"run-a-0", "run-c-0"}),
    (["--workflow", "evolve"], {"run-c-0"}),
    (["--model", "model-y"], {"run-b-0"}),
    (["--run", "run-b"], {"run-b-0"}),
    (["--run", "run-a-0", "--run", "run-c"], {"run-a-0", "run-c-0"}),
    (["--since", "2024-12-31T23:00+00:00", "--dataset", "gsm8k", "--workflow", "reason"], {"run-a-0"}),
    (["--since", "2025-01-01T12:00+00:00"], {"run-c-0"}),
    (["--until", "2025-01-01T12:00+00:00"], {"run-a-0", "run-b-0"}),
])
def test_filters_pick_the_runs_exported(tmp_path: Path, capsys: pytest.CaptureFixture[str], flags: list[str],
                                        runs: set[str]) -> None:
    """Each filter keeps the trajectories of the runs it names; together they must all hold."""
    code, rows, err = _export(tmp_path, capsys, *flags)
    assert code == 0, err
    assert {row["run_id"] for row in rows} == runs


def test_rows_carry_the_model_and_the_ground_truth(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every row names the model that produced it and its problem's reference answer."""
    _, rows, _ = _export(tmp_path, capsys, "--run", "run-b-0")
    assert rows and all(row["model"] == "model-y" and row["ground_truth"] == "gt-b" for row in rows)


@pytest.mark.parametrize("flags", [["--dataset", "nope"], ["--run", "no-such-run"], ["--since", "1m"]])
def test_a_filter_matching_nothing_says_so_and_writes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                             flags: list[str]) -> None:
    """No file is written; one line names the filter and how many trajectories there were."""
    code, _, err = _export(tmp_path, capsys, *flags)
    assert code == 1 and not (tmp_path / "out.jsonl").exists()
    assert f"no sealed trajectory matches {flags[0]}" in err and "(3 in all); nothing written" in err


def test_an_ambiguous_run_prefix_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`--run run-` matches three runs: the error lists them, nothing is written."""
    code, _, err = _export(tmp_path, capsys, "--run", "run-")
    assert code == 1 and "run id prefix 'run-' is ambiguous: 3 runs match" in err
    assert not (tmp_path / "out.jsonl").exists()


@pytest.mark.parametrize("flags", [["--since", "soon"], ["--workflow", "dream"], ["--until", "2026-99-01"]])
def test_garbage_filter_values_are_usage_errors(flags: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Bad filter values stop at the parser with one line naming the flag."""
    with pytest.raises(SystemExit) as info:
        main(["export", "--out", "x.jsonl", *flags])
    assert info.value.code == 2 and f"argument {flags[0]}" in capsys.readouterr().err


def test_export_from_the_log_filters_and_carries_ground_truth(two_runs: Path, tmp_path: Path) -> None:
    """From the event log: --run by prefix exports that run only, with its model and ground truth."""
    out = tmp_path / "one.jsonl"
    code, stdout, err = apollo(two_runs, "export", "--format", "jsonl", "--out", str(out), "--run", "solve-abd")
    assert code == 0, err[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert rows and {row["run_id"] for row in rows} == {"solve-abd2"}
    assert all(row["model"].startswith("scripted:") and row["ground_truth"] for row in rows)
    assert json.loads(stdout)["trajectories"] == 1
