"""Row mapping and garbage input for JSONL dataset files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.datasets import DatasetError, RejectedRow, last_boxed_content, load_problems

GOOD = {"question": "What is 1+1?", "answer": "2"}


def _jsonl(tmp_path: Path, lines: list[object], name: str = "bench.jsonl") -> Path:
    path = tmp_path / name
    text = "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines)
    path.write_text(text + "\n", encoding="utf-8")
    return path


def test_bad_rows_are_reported_not_fatal(tmp_path: Path) -> None:
    """Malformed, non-object, blank and incomplete lines are rejected; good rows still load."""
    path = _jsonl(
        tmp_path,
        [
            GOOD,
            '{"question": "unterminated',
            "[1, 2]",
            "",
            {"question": "no answer here"},
            {"answer": "5"},
            {"question": "   ", "answer": "3"},
            {"problem": "Blank answer", "answer": "  "},
            {"problem": "Fine", "answer": 7},
        ],
    )
    loaded = load_problems(path)
    assert [p.question for p in loaded.problems] == ["What is 1+1?", "Fine"]
    reasons = {r.line: r.reason for r in loaded.rejected}
    assert sorted(reasons) == [2, 3, 4, 5, 6, 7, 8]
    assert reasons[2].startswith("not valid JSON")
    assert reasons[3] == "expected a JSON object, got list"
    assert reasons[4] == "blank line"
    assert reasons[5].startswith("no answer")
    assert reasons[6].startswith("no problem text")
    assert reasons[7].startswith("no problem text")
    assert reasons[8].startswith("no answer")
    assert loaded.rows == 9


def test_ids_fall_back_to_zero_based_line_index(tmp_path: Path) -> None:
    """Rows without an id field get their 0-based line index, unaffected by rejected rows."""
    path = _jsonl(tmp_path, [GOOD, "not json", GOOD])
    assert [p.problem_id for p in load_problems(path).problems] == ["0", "2"]


def test_id_fields_are_sanitised_into_subject_tokens(tmp_path: Path) -> None:
    """Ids with dots, slashes or spaces keep only ``[A-Za-z0-9_-]``; long ids are hashed."""
    path = _jsonl(
        tmp_path,
        [
            {**GOOD, "id": "a.b/c d*>"},
            {**GOOD, "idx": 3.0},
            {**GOOD, "unique_id": "x" * 200},
            {**GOOD, "id": "ok-1_A"},
        ],
    )
    ids = [p.problem_id for p in load_problems(path).problems]
    assert ids[:2] == ["a_b_c_d__", "3"]
    assert len(ids[2]) <= 64 and ids[2].startswith("xxx")
    assert ids[3] == "ok-1_A"


def test_duplicate_ids_are_rejected(tmp_path: Path) -> None:
    """A second row with the same problem id is rejected, naming the first line."""
    path = _jsonl(tmp_path, [{**GOOD, "id": 1}, {**GOOD, "id": 1}])
    loaded = load_problems(path)
    assert len(loaded.problems) == 1
    assert loaded.rejected == [RejectedRow(2, "duplicate problem id '1' (first used on line 1)")]


def test_data_source_defaults_to_file_stem_or_uses_field(tmp_path: Path) -> None:
    """``data_source`` comes from the row when present, else from the file name."""
    path = _jsonl(tmp_path, [GOOD, {**GOOD, "data_source": "math-ai/aime24"}], "my_set.jsonl")
    assert [p.data_source for p in load_problems(path).problems] == ["my_set", "math-ai/aime24"]


def test_answer_normalisation(tmp_path: Path) -> None:
    """Floats, boxes, GSM8K hashes and lists become plain answer strings."""
    path = _jsonl(
        tmp_path,
        [
            {"question": "a", "answer": 27.0},
            {"question": "b", "answer": 2.5},
            {"question": "c", "answer": "so \\boxed{\\frac{1}{2}}"},
            {"question": "d", "answer": "work\n#### 1,234"},
            {"question": "e", "solution": "x \\boxed{1} then \\boxed{\\{1, 2\\}}."},
            {"question": "f", "answer": ["1", "2"]},
            {"question": "g", "final_answer": "42"},
        ],
    )
    answers = [p.ground_truth for p in load_problems(path).problems]
    assert answers == ["27", "2.5", "\\frac{1}{2}", "1234", "\\{1, 2\\}", "1\n2", "42"]


def test_unusable_answers_are_rejected(tmp_path: Path) -> None:
    """Unboxed solutions, unclosed boxes and non-finite numbers are rejected rows."""
    path = _jsonl(
        tmp_path,
        [
            GOOD,
            {"question": "a", "solution": "worked, but never boxed"},
            {"question": "b", "answer": "\\boxed{1"},
            '{"question": "c", "answer": NaN}',
            {"question": "d", "answer": "\\boxed{}"},
        ],
    )
    reasons = [r.reason for r in load_problems(path).rejected]
    assert reasons[0] == "no answer field and no \\boxed{} answer in 'solution'"
    assert "\\boxed{}" in reasons[1]
    assert "not a finite number" in reasons[2]
    assert "empty" in reasons[3]


def test_non_text_question_is_rejected(tmp_path: Path) -> None:
    """A question that is an object is rejected, not stringified."""
    path = _jsonl(tmp_path, [GOOD, {"question": {"a": 1}, "answer": "1"}])
    assert load_problems(path).rejected[0].reason.startswith("problem text in 'question'")


def test_bom_crlf_and_trailing_blank_lines_are_tolerated(tmp_path: Path) -> None:
    """A UTF-8 BOM and Windows line ends do not break the first row."""
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\r\n" + b"\r\n")
    loaded = load_problems(path)
    assert len(loaded.problems) == 1
    assert loaded.rejected == [RejectedRow(2, "blank line")]


def test_huge_and_invalid_utf8_lines_are_rejected(tmp_path: Path) -> None:
    """An over-long line is skipped without decoding, and bad UTF-8 is reported."""
    path = tmp_path / "huge.jsonl"
    good = json.dumps(GOOD).encode()
    path.write_bytes(b"x" * 5000 + b"\n" + b"\xff\xfe{}\n" + good + b"\n")
    loaded = load_problems(path, max_line_bytes=1000)
    assert loaded.rejected == [
        RejectedRow(1, "line is longer than 1000 bytes"),
        RejectedRow(2, "line is not valid UTF-8"),
    ]
    assert loaded.problems[0].problem_id == "2"


def test_deeply_nested_json_is_a_rejected_row(tmp_path: Path) -> None:
    """Pathological nesting is reported instead of crashing the loader."""
    path = _jsonl(tmp_path, ["[" * 100_000, GOOD])
    loaded = load_problems(path)
    assert loaded.rejected[0].reason.startswith("not valid JSON")


def test_limit_counts_usable_problems(tmp_path: Path) -> None:
    """``limit`` counts usable problems, skipping over rejected rows."""
    path = _jsonl(tmp_path, ["junk", GOOD, "junk", GOOD, GOOD])
    loaded = load_problems(path, limit=2)
    assert [p.problem_id for p in loaded.problems] == ["1", "3"]
    assert len(loaded.rejected) == 2


@pytest.mark.parametrize("limit", [0, -3])
def test_non_positive_limit_is_refused(tmp_path: Path, limit: int) -> None:
    """A limit below one is a usage error."""
    with pytest.raises(ValueError, match="limit"):
        load_problems(_jsonl(tmp_path, [GOOD]), limit=limit)


def test_json_array_file_loads(tmp_path: Path) -> None:
    """A ``.json`` file holding an array of objects is accepted."""
    path = tmp_path / "arr.json"
    path.write_text(json.dumps([GOOD, 5, GOOD]))
    loaded = load_problems(path)
    assert len(loaded.problems) == 2
    assert loaded.rejected == [RejectedRow(2, "expected a JSON object, got int")]


def test_metadata_keeps_other_fields_but_not_question_or_answer(tmp_path: Path) -> None:
    """Leftover fields go to metadata; the fields used for question and answer do not."""
    row = {"problem": "p", "question": "p", "answer": "1", "solution": "s", "level": 3}
    problem = load_problems(_jsonl(tmp_path, [row])).problems[0]
    assert problem.metadata == {"solution": "s", "level": 3}


def test_last_boxed_content_forms() -> None:
    """The last box wins, nested braces match, ``\\fbox`` and brace-less forms work."""
    assert last_boxed_content("\\boxed{1} and \\boxed{\\frac{a}{b}}") == "\\frac{a}{b}"
    assert last_boxed_content("\\fbox{7}") == "7"
    assert last_boxed_content("so $\\boxed 5$.") == "5"
    assert last_boxed_content("\\boxed{\\left\\{ x \\right.}") == "\\left\\{ x \\right."
    assert last_boxed_content("no box") is None
    assert last_boxed_content("\\boxed{open") is None


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("empty.jsonl", b"", "empty"),
        ("blank.jsonl", b"\n\n  \n", "no usable problems"),
        ("junk.jsonl", b"hello\nworld\n", "no usable problems"),
        ("binary.jsonl", bytes(range(256)) * 4, "binary"),
        ("data.csv", b"question,answer\n1+1,2\n", "unsupported dataset file type '.csv'"),
        ("noext", b'{"question": "q", "answer": "1"}\n', "unsupported dataset file type"),
        ("broken.json", b"[{]", "not valid JSON"),
    ],
)
def test_unusable_files_raise_one_line_errors(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    """Files that cannot be datasets raise DatasetError with a one-line message."""
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(DatasetError, match=message) as info:
        load_problems(path)
    assert "\n" not in str(info.value)


def test_missing_file_and_directory_raise(tmp_path: Path) -> None:
    """A missing path and a directory are clear errors."""
    with pytest.raises(DatasetError, match="not found"):
        load_problems(tmp_path / "nope.jsonl")
    folder = tmp_path / "folder.jsonl"
    folder.mkdir()
    with pytest.raises(DatasetError, match="not a regular file"):
        load_problems(folder)
    with pytest.raises(DatasetError, match="not found"):
        load_problems("bad\x00name.jsonl")


def test_all_rejected_message_names_first_reason(tmp_path: Path) -> None:
    """When nothing is usable the error quotes the first rejection."""
    path = _jsonl(tmp_path, [{"question": "q"}])
    with pytest.raises(DatasetError, match=r"line 1: no answer"):
        load_problems(path)
