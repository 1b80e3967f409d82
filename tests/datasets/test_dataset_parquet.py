"""Parquet datasets: the reference's RL/eval layout and plain question/answer tables."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.datasets import DatasetError, load_problems

SYSTEM = "Reason step by step; put the final answer in a box."


def _reference_row(index: int, question: str, answer: str) -> dict[str, object]:
    return {
        "data_source": "math-ai/aime24",
        "prompt": [
            {"role": "system", "content": SYSTEM},
            {"role": "user", "content": question},
        ],
        "ability": "math",
        "reward_model": {"style": "rule", "ground_truth": answer},
        "extra_info": {
            "split": "test",
            "index": index,
            "question": question,
            "ground_truth": answer,
            "gt_traj": "",
            "data_source": "math-ai/aime24",
        },
        "metadata": json.dumps({"url": f"https://example.org/{index}"}),
    }


def _write(path: Path, rows: list[dict[str, object]]) -> Path:
    pq.write_table(pa.Table.from_pylist(rows), path)
    return path


def test_reference_layout_parquet_loads(tmp_path: Path) -> None:
    """Rows in the reference layout map question, ground truth, source and index."""
    path = _write(
        tmp_path / "test.parquet",
        [_reference_row(0, "What is 2+2?", "4"), _reference_row(7, "Half of 9?", "4.5")],
    )
    loaded = load_problems(path)
    assert loaded.format == "parquet"
    first, second = loaded.problems
    assert (first.problem_id, first.question, first.ground_truth) == ("0", "What is 2+2?", "4")
    assert second.problem_id == "7"
    assert first.data_source == "math-ai/aime24"
    assert first.metadata["ability"] == "math"
    assert "prompt" not in first.metadata


def test_reference_layout_falls_back_to_prompt_messages(tmp_path: Path) -> None:
    """Without ``extra_info.question`` the last user message of ``prompt`` is the question."""
    row = _reference_row(3, "From the prompt?", "1")
    row["extra_info"] = {"split": "test", "index": 3, "question": "", "data_source": ""}
    loaded = load_problems(_write(tmp_path / "p.parquet", [row]))
    problem = loaded.problems[0]
    assert problem.question == "From the prompt?"
    assert problem.ground_truth == "1"
    assert problem.data_source == "math-ai/aime24"


def test_plain_parquet_with_question_answer_columns(tmp_path: Path) -> None:
    """A flat table with question/answer columns loads; the stem is the data source."""
    rows = [{"question": "q1", "answer": 3.0}, {"question": "q2", "answer": None}]
    loaded = load_problems(_write(tmp_path / "flat.parquet", rows))
    assert [(p.problem_id, p.ground_truth, p.data_source) for p in loaded.problems] == [
        ("0", "3", "flat")
    ]
    assert loaded.rejected[0].line == 2
    assert loaded.rejected[0].reason.startswith("no answer")


def test_parquet_limit_and_binary_cells(tmp_path: Path) -> None:
    """``limit`` applies to parquet, and non-JSON cell types become JSON-friendly values."""
    rows = [{"problem": f"q{i}", "answer": str(i), "blob": b"\x01ab"} for i in range(50)]
    loaded = load_problems(_write(tmp_path / "many.parquet", rows), limit=3)
    assert [p.problem_id for p in loaded.problems] == ["0", "1", "2"]
    assert isinstance(loaded.problems[0].metadata["blob"], str)


def test_corrupt_parquet_raises(tmp_path: Path) -> None:
    """A ``.parquet`` file that is not parquet raises DatasetError."""
    path = tmp_path / "fake.parquet"
    path.write_bytes(b'{"question": "q", "answer": "1"}\n')
    with pytest.raises(DatasetError, match="not a readable parquet file"):
        load_problems(path)


def test_parquet_without_usable_rows_raises(tmp_path: Path) -> None:
    """A parquet table with no question column has no usable problems."""
    path = _write(tmp_path / "nothing.parquet", [{"x": 1}, {"x": 2}])
    with pytest.raises(DatasetError, match="no usable problems"):
        load_problems(path)
