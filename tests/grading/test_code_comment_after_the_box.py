"""Code after the final box is read line by line, each statement apart from its comment.

The ninth attacker's ``assert answer == 43  # OK`` after ``\\boxed{42}`` scored 1: the code was read as one sentence
that ended on the comment's confirming word, so the other value it states was never where a sentence ends. A
statement now ends where its comment starts, and the comment is a sentence of its own.
"""

from __future__ import annotations

import itertools

import pytest

from tests.grading.support import graded

BOX = "The answer is $\\boxed{42}$.\n\n```python\n{code}\n```"
STATEMENTS = ["assert answer == {}", "answer = {}", "final_answer = {}", "assert result == {}", "ans = {}",
              "print(answer == {})", "solution = {}", "result: int = {}"]
COMMENTS = ["# OK", "# checked", "# True", "# verified", "# matches", "# done", "# all good"]


@pytest.mark.parametrize(("statement", "comment", "value"),
                         list(itertools.product(STATEMENTS, COMMENTS, ["43", "41", "-42", "4.2"])))
def test_code_that_states_another_value_takes_the_box_back_whatever_its_comment_says(statement: str, comment: str,
                                                                                      value: str) -> None:
    """A confirming comment after ``answer = 43`` does not make 43 the box's value."""
    code = f"{statement.format(value)}  {comment}"
    assert graded(BOX.replace("{code}", code), "42") == 0.0, code


@pytest.mark.parametrize(("statement", "comment"),
                         list(itertools.product(STATEMENTS[:3], [c for c in COMMENTS if c != "# True"])))
def test_code_that_restates_the_box_with_a_confirming_comment_keeps_it(statement: str, comment: str) -> None:
    """``answer = 42  # OK`` after a box of 42 confirms it (a bare ``# True`` is a remark no list confirms)."""
    code = f"{statement.format('42')}  {comment}"
    assert graded(BOX.replace("{code}", code), "42") == 1.0, code


@pytest.mark.parametrize("comment", ["# actually 43", "# wrong, it is 43", "# the real answer is 43"])
def test_a_comment_that_takes_the_box_back_is_read_on_its_own(comment: str) -> None:
    """``answer = 42  # actually 43``: the comment is a later sentence that corrects the box."""
    assert graded(BOX.replace("{code}", f"answer = 42  {comment}"), "42") == 0.0
