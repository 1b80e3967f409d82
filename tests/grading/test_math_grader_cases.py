"""apollo's math grader against every labelled case in tests/grading/cases/*.jsonl."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from handlers.grading import DEFAULT_MODE, grade_answer

CASES_DIR = Path(__file__).with_name("cases")
CASES = [
    pytest.param(row, id=f"{path.stem}-{number}")
    for path in sorted(CASES_DIR.glob("*.jsonl"))
    for number, row in enumerate(
        (json.loads(line) for line in path.read_text().splitlines() if line.strip()), start=1
    )
]


def _rows() -> list[dict]:
    return [param.values[0] for param in CASES]


def test_the_case_files_hold_enough_labelled_cases() -> None:
    """At least 300 cases, 40 of them adversarial, each with its fields and a 0/1 label."""
    rows = _rows()
    assert len(rows) >= 300
    assert sum(row["source"] == "apollo-adversarial" for row in rows) >= 40
    for row in rows:
        assert {"answer", "gold", "label", "source"} <= row.keys(), row
        assert row["label"] in (0, 1), row
        assert row["source"].strip(), row


def test_cases_from_public_suites_name_their_repository_and_path() -> None:
    """A case taken from another project cites it as repo:path."""
    for row in _rows():
        if not row["source"].startswith("apollo"):
            repo, _, path = row["source"].partition(":")
            assert repo.count("/") == 1 and path, row


@pytest.mark.parametrize("case", CASES)
def test_default_grader_gives_every_case_its_label(case: dict) -> None:
    """The default grader scores each labelled pair as a careful mathematician would."""
    grade = grade_answer(case["answer"], case["gold"])
    assert grade.method == DEFAULT_MODE == "math"
    assert grade.score == case["label"], f"{case} -> {grade.detail}"
