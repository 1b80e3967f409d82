"""`apollo run` over a dataset file whose rows changed since an earlier run of it.

Run ids follow the file's name, the problem id and the settings digest, so a re-run "resumed":
after row 0 became "What is 2+3?" (answer 5), it reported the earlier run of the old row 0
(another question, graded against 18) as this row's result, exit 0. Now it refuses, naming the
row and the run, before anything is submitted.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.support import apollo

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]


def _write(path: Path, question: str, answer: str) -> None:
    path.write_text(json.dumps({"question": question, "answer": f"#### {answer}"}) + "\n")


def test_a_changed_row_is_not_reported_with_the_old_row_s_run(tmp_path: Path) -> None:
    """Row 0 changed after a run of the file: the re-run refuses in one line and the results file stays."""
    data, dataset, out = tmp_path / "data", tmp_path / "mini.jsonl", tmp_path / "results.jsonl"
    _write(dataset, "What is 7+8?", "15")
    code, _, err = apollo(data, "run", "--dataset", str(dataset), "--out", str(out))
    assert code == 0, err[-2000:]
    before = out.read_text()
    assert json.loads(before)["problem_id"] == "0"
    _write(dataset, "What is 2+3?", "5")
    code, stdout, err = apollo(data, "run", "--dataset", str(dataset), "--out", str(out))
    assert (code, stdout) == (1, ""), err[-2000:]
    (line,) = [line for line in err.splitlines() if line.startswith("apollo: error:")]
    assert line.startswith("apollo: error: problem 0 of mini is not what its recorded run mini_reason-"), line
    assert "question was 'What is 7+8?'" in line and "nothing was submitted" in line
    assert out.read_text() == before


def test_a_changed_ground_truth_is_refused_too(tmp_path: Path) -> None:
    """The same question with another answer: refused, naming the ground truth that run was graded against."""
    data, dataset = tmp_path / "data", tmp_path / "mini.jsonl"
    _write(dataset, "What is 7+8?", "15")
    code, _, err = apollo(data, "run", "--dataset", str(dataset), "--out", str(tmp_path / "r.jsonl"))
    assert code == 0, err[-2000:]
    _write(dataset, "What is 7+8?", "16")
    code, _, err = apollo(data, "run", "--dataset", str(dataset), "--out", str(tmp_path / "r.jsonl"))
    assert code == 1
    assert "that run's ground truth was '15'" in err
