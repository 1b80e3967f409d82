"""apollo's math grader on ground truths it was not tuned on: MATH-500's answers.

Each answer must equal itself written the ways a model writes it (boxed, in ``$...$``,
``\\dfrac``, without spaces, with a full stop), and must not equal itself with ``+1`` added
or its first digit changed.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from handlers.grading.pipeline import grade_math

_REPO = Path(__file__).resolve().parents[2]
_CANDIDATES = [_REPO / "shared" / "data", _REPO.parent / "shared" / "data"]
DATA = next((path for path in _CANDIDATES if path.is_dir()), _CANDIDATES[-1])
MATH500 = DATA / "math500.jsonl"
EVERY = 5
"""Every fifth answer keeps the test quick; all 500 pass when run by hand."""

pytestmark = pytest.mark.skipif(not MATH500.is_file(), reason=f"benchmark data not found at {DATA}")


def _answers() -> list[str]:
    rows = [json.loads(line) for line in MATH500.read_text().splitlines() if line.strip()]
    return [str(row["answer"]) for row in rows][::EVERY]


def _first_digit_changed(text: str) -> str | None:
    match = re.search(r"\d", text)
    if match is None:
        return None
    digit = str((int(match.group()) + 1) % 10)
    return text[: match.start()] + digit + text[match.end() :]


def test_math500_answers_equal_their_rewritings() -> None:
    """Boxed, $-wrapped, \\dfrac, unspaced and full-stopped forms of each answer score 1."""
    misses = []
    for gold in _answers():
        for written in (f"\\boxed{{{gold}}}", f"${gold}$", gold.replace("\\frac", "\\dfrac"),
                        gold.replace(" ", ""), f"{gold}."):
            if grade_math(written, gold).score != 1.0:
                misses.append((written, gold))
    assert not misses


def test_math500_answers_do_not_equal_near_misses() -> None:
    """Adding 1 or changing the first digit of an answer always scores 0."""
    accepted = []
    for gold in _answers():
        for near in (f"{gold}+1", _first_digit_changed(gold)):
            if near is not None and grade_math(near, gold).score != 0.0:
                accepted.append((near, gold))
    assert not accepted
