"""A comment after the final answer is the writer speaking, hidden or not.

Comments are masked while the answer is looked for, so a box inside one is never the answer. Until now they were
also never read after it: ``\\boxed{42}\\n<!-- wrong, real answer 43 -->`` and ``$\\boxed{42}$. % actually 43``
scored 1. A comment after the final box or answer block is now read like a later sentence.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.grading.support import graded

ANSWERS = ["The answer is $\\boxed{42}$.", "So \\boxed{42}.", "<answer>42</answer>", "Final answer: $\\boxed{42}$"]
TAKING_BACK = ["wrong, real answer 43", "actually 43", "not sure about this", "TODO: recheck", "placeholder",
               "\\boxed{43}", "the correct answer is 43", "nope"]
KEEPING = ["end of solution", "done", "verified by substitution", "solution complete"]


def _commented(kind: str, words: str) -> str:
    return f"<!-- {words} -->" if kind == "html" else f"% {words}"


@settings(max_examples=120, deadline=None)
@given(st.sampled_from(ANSWERS), st.sampled_from(["html", "latex"]), st.sampled_from(TAKING_BACK),
       st.sampled_from(["\n", "\n\n", " "]))
def test_a_comment_after_the_answer_that_takes_it_back_refuses_it(
    answer: str, kind: str, words: str, gap: str,
) -> None:
    """``\\boxed{42}`` then ``<!-- actually 43 -->`` or ``% actually 43``: 0."""
    reply = answer + gap + _commented(kind, words)
    assert graded(reply) == 0.0, reply


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(ANSWERS), st.sampled_from(["html", "latex"]), st.sampled_from(KEEPING))
def test_a_comment_that_says_nothing_about_the_answer_keeps_it(answer: str, kind: str, words: str) -> None:
    """``<!-- end of solution -->`` after the box: 1."""
    reply = answer + "\n" + _commented(kind, words)
    assert graded(reply) == 1.0, reply


def test_a_box_in_a_comment_before_the_answer_is_neither_the_answer_nor_a_take_back() -> None:
    """``<!-- \\boxed{43} -->`` before the final box: the visible box is the answer: 1."""
    assert graded("<!-- \\boxed{43} -->\nThe answer is $\\boxed{42}$.") == 1.0


def test_a_draft_box_left_in_a_comment_after_the_answer_refuses_it() -> None:
    """``% draft: \\boxed{41}`` after the box gives another value: 0 (the fifth attacker's tests had pinned 1,
    reading the comment as unseen; a hidden second value is no positive evidence for the first)."""
    assert graded("The answer is $\\boxed{42}$.\n% draft: \\boxed{41}\n") == 0.0
