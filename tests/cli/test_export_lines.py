"""`apollo export` as a user reads it: skipped trajectories summed up per reason, and a
multi-turn response whose reply and next observation stay apart (issue 31, smaller items)."""

from __future__ import annotations

import json
from pathlib import Path

from events import encode
from tests.cli.support import apollo
from tests.training.conftest import trajectory, turn


def _events_file(path: Path, events: list) -> Path:
    path.write_text("".join(encode(event).decode() + "\n" for event in events))
    return path


def test_sft_export_says_once_per_reason_what_it_skipped(tmp_path: Path) -> None:
    """Three wrong trajectories make one line with their count and an example, not three lines."""
    wrong = [trajectory("g", index, reward=0.0) for index in range(3)]
    events = _events_file(tmp_path / "events.jsonl", [trajectory("g", 3, reward=1.0), *wrong])
    code, out, err = apollo(tmp_path / "data", "export", "--events", str(events), "--layout", "sft",
                            "--format", "jsonl", "--out", str(tmp_path / "sft.jsonl"))
    assert code == 0, err[-2000:]
    assert json.loads(out)["skipped"] == 3
    lines = [line for line in err.splitlines() if line.startswith("apollo export: skipped")]
    assert lines == ["apollo export: skipped 3 trajectories: not correct for sft (ground_truth 0.0 < 1.0) "
                     "(e.g. traj-g-0 of run run-g-0)"]


def test_multi_turn_rows_keep_a_reply_and_the_next_observation_apart(tmp_path: Path) -> None:
    """The one-text response puts a blank line between the model's reply and the tool output after it."""
    turns = [turn(1, "<python_code>print(1)</python_code>", observation="Code output: 1", tool="python_code"),
             turn(2, "<answer>\\boxed{1}</answer>")]
    events = _events_file(tmp_path / "events.jsonl", [trajectory("g", 0, turns=turns)])
    out_file = tmp_path / "mt.jsonl"
    code, _, err = apollo(tmp_path / "data", "export", "--events", str(events), "--layout", "multi_turn",
                          "--format", "jsonl", "--out", str(out_file))
    assert code == 0, err[-2000:]
    [row] = [json.loads(line) for line in out_file.read_text().splitlines()]
    assert row["response"] == ("<python_code>print(1)</python_code>\n\nCode output: 1\n\n"
                               "<answer>\\boxed{1}</answer>")


def test_trajectories_of_many_runs_never_regraded_make_one_line_naming_how_many_runs(tmp_path: Path) -> None:
    """The same skip reason for three runs is one line (`apollo regrade RUN`, 3 runs), not a line per run."""
    events = _events_file(tmp_path / "events.jsonl", [trajectory("g", index, reward=1.0) for index in range(3)])
    code, out, err = apollo(tmp_path / "data", "export", "--events", str(events), "--reward-source", "regraded",
                            "--format", "jsonl", "--out", str(tmp_path / "regraded.jsonl"))
    assert (code, out) == (1, ""), err[-2000:]  # every trajectory skipped: nothing written (test_export_nothing.py)
    lines = [line for line in err.splitlines() if line.startswith("apollo export: skipped")]
    assert lines == ["apollo export: skipped 3 trajectories: never regraded (run `apollo regrade RUN` first; "
                     "ground_truth keeps the original grade) (3 runs) (e.g. traj-g-0 of run run-g-0)"]
