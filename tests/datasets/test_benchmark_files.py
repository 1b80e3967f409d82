"""The real benchmark files in shared/data load with the right counts and answers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.datasets import DatasetLoad, load_problems

_REPO = Path(__file__).resolve().parents[2]
_CANDIDATES = [_REPO / "shared" / "data", _REPO.parent / "shared" / "data"]
DATA = next((path for path in _CANDIDATES if path.is_dir()), _CANDIDATES[-1])

pytestmark = pytest.mark.skipif(not DATA.is_dir(), reason=f"benchmark data not found at {DATA}")

EXPECTED_ROWS = {
    "aime24": 30,
    "aime25": 30,
    "amc23": 40,
    "math500": 500,
    "minerva_math": 272,
    "gsm8k": 1319,
}
_SAFE = re.compile(r"[A-Za-z0-9_-]+")


def _load(stem: str) -> DatasetLoad:
    return load_problems(DATA / f"{stem}.jsonl")


@pytest.mark.parametrize(("stem", "expected"), sorted(EXPECTED_ROWS.items()))
def test_every_benchmark_row_is_usable(stem: str, expected: int) -> None:
    """Each shipped benchmark yields exactly its published number of problems, none rejected."""
    loaded = _load(stem)
    assert len(loaded.problems) == expected
    assert loaded.rejected == []
    assert loaded.rows == expected
    assert loaded.format == "jsonl"


@pytest.mark.parametrize("stem", sorted(EXPECTED_ROWS))
def test_benchmark_ids_are_unique_subject_tokens(stem: str) -> None:
    """Problem ids are unique within a file and only use subject-safe characters."""
    ids = [p.problem_id for p in _load(stem).problems]
    assert len(set(ids)) == len(ids)
    assert all(_SAFE.fullmatch(i) for i in ids)


@pytest.mark.parametrize("stem", sorted(EXPECTED_ROWS))
def test_benchmark_problems_have_text_answer_and_source(stem: str) -> None:
    """Every problem has non-blank question and answer, and the file stem as data source."""
    for problem in _load(stem).problems:
        assert problem.question.strip() == problem.question != ""
        assert problem.ground_truth.strip() == problem.ground_truth != ""
        assert problem.data_source == stem


def test_aime24_uses_answer_field_and_id() -> None:
    """AIME 2024 maps ``problem`` + ``answer`` and takes ids from ``id``."""
    first = _load("aime24").problems[0]
    assert first.problem_id == "60"
    assert first.ground_truth == "204"
    assert first.question.startswith("Every morning Aya goes for a $9$-kilometer-long walk")
    assert first.metadata["url"].startswith("https://")
    assert "question" not in first.metadata
    assert "answer" not in first.metadata


def test_aime25_first_problem() -> None:
    """AIME 2025 problem 1 has answer 70."""
    first = _load("aime25").problems[0]
    assert (first.problem_id, first.ground_truth) == ("90", "70")


def test_amc23_float_answers_become_integers_text() -> None:
    """AMC answers stored as floats (27.0) become "27"."""
    problems = _load("amc23").problems
    assert problems[0].ground_truth == "27"
    assert all(not p.ground_truth.endswith(".0") for p in problems)


def test_math500_keeps_latex_answers_and_sanitises_unique_id() -> None:
    """MATH-500 answers stay LaTeX; the path-like ``unique_id`` becomes a safe id."""
    first = _load("math500").problems[0]
    assert first.ground_truth == "\\left( 3, \\frac{\\pi}{2} \\right)"
    assert first.problem_id == "test_precalculus_807_json"
    assert first.metadata["unique_id"] == "test/precalculus/807.json"
    assert first.metadata["level"] == 2


def test_minerva_answers_come_from_nested_last_box() -> None:
    """Minerva answers are the brace-matched content of the solution's last box."""
    problems = {p.problem_id: p for p in _load("minerva_math").problems}
    assert problems["0"].ground_truth == "1.6"
    assert problems["25"].ground_truth == "\\frac{a M^{1 / 3}}{G M^{2 / 3}+b}"
    assert problems["30"].ground_truth == "\\sqrt{4 \\pi G \\rho_{0} r_{0}^{2}}"
    assert all("\\boxed" not in p.ground_truth for p in problems.values())


def test_gsm8k_answer_follows_hashes_without_commas() -> None:
    """GSM8K answers are the number after ``####`` with thousands separators removed."""
    problems = _load("gsm8k").problems
    assert problems[0].ground_truth == "18"
    assert all(re.fullmatch(r"-?\d+(\.\d+)?", p.ground_truth) for p in problems)


def test_limit_on_real_file_stops_early() -> None:
    """``limit`` returns the first N problems and stops reading."""
    loaded = load_problems(DATA / "gsm8k.jsonl", limit=5)
    assert [p.problem_id for p in loaded.problems] == ["0", "1", "2", "3", "4"]
    assert loaded.rows == 5
