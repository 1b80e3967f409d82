"""What a reply says around its final box: a label before it, a list or a retraction after it.

Found on 2026-11-28 by probing whole replies the grader had not been tuned on (205 replies whose
final box held the gold while the reply did not give it as the answer). Three classes scored 1:

- a label before a colon was never read: ``Lower bound: \\boxed{42}``, ``Estimate: \\boxed{42}``,
  ``Part (a): \\boxed{42}`` read as 42. The label must now announce the answer, as the clause right
  before the box already had to (``Answer:``, ``Final answer:``, ``Total:`` still do).
- a value after the box's comma was dropped: ``\\boxed{42}, 43`` read as 42. A clause that is
  another value makes the box one item of a list, and the list is the answer.
- later sentences were never read: ``\\boxed{42}. Wait, that's wrong. The answer is 41.``,
  ``\\boxed{42}. Correction: 43.`` and ``\\boxed{42}. Thus 43.`` read as 42. A later sentence that
  takes the answer back, asks a question, or states or concludes a value other than the box's is
  now read with the box.

Each class is also an adversary operator (``taken_back_after_the_box``, ``label_before_the_box``,
``list_continued_after_the_box`` in ``engine/testing/grading_adversary/changing_replies.py``),
fuzzed over every benchmark gold: without these rules they gave 140 false positives in 150 mutants.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.grading import extract_final_answer, grade_answer


def graded(reply: str, gold: str) -> float:
    return grade_answer(extract_final_answer(reply), gold).score


WRONG = [
    ("Lower bound: \\boxed{42}.", "a bound is not the answer"),
    ("Upper bound: $\\boxed{42}$", "a bound is not the answer"),
    ("Estimate: \\boxed{42}.", "an estimate"),
    ("Answer (rounded): \\boxed{42}", "a rounded answer"),
    ("Part (a): \\boxed{42}", "one part's answer"),
    ("Step 1: \\boxed{42}. Step 2: 43.", "an intermediate step"),
    ("Answer: \\boxed{42}, 43", "a list of two"),
    ("The answer is $\\boxed{42}$; $-3$.", "a list of two"),
    ("\\boxed{42}, x+1", "a list of two"),
    ("\\boxed{42}\n\nWait, that's wrong. The answer is 41.", "taken back"),
    ("\\boxed{42}\n\nActually the answer is 41.", "taken back"),
    ("We get \\boxed{42}. Hmm, let me recheck: 43.", "taken back"),
    ("The final answer is \\boxed{42}. Correction: 43.", "corrected"),
    ("Final: \\boxed{42}\nEdit: the correct answer is 43.", "corrected"),
    ("Answer:\n\\boxed{42}\n\n(I'm not confident; could be 43)", "left open"),
    ("\\boxed{42}. The correct answer is 43.", "another answer stated"),
    ("\\boxed{42}. The answer is 420.", "another answer stated"),
    ("\\boxed{42}. The answer is 42.5.", "another answer stated"),
    ("\\boxed{42}. The result should be $x - 1$.", "another answer stated"),
    ("<answer>The answer is \\boxed{42}. Oops, it is 24.</answer>", "taken back inside the answer block"),
    ("The answer is \\boxed{42}.\n\nBut that contradicts step 2, so it is 43.", "contradicted"),
    ("\\boxed{42} \n\n ... or is it 43?", "a question after"),
    ("\\boxed{42}\n\n$43$", "another value alone"),
    ("\\boxed{42}\nso 43", "another value concluded"),
    ("\\boxed{42}\n\nThus 43.", "another value concluded"),
    ("\\boxed{42}\n\nTherefore $x = 43$.", "another value concluded"),
    ("\\boxed{42}, so the answer is 43", "another value concluded in the same sentence"),
    ("\\boxed{42}, or 41.", "an alternative after the comma"),
    ("\\boxed{42}, I think.", "a hedge after the comma"),
    ("\\boxed{42}\n\n**Answer:** 43", "another answer under a bold label"),
]

RIGHT = [
    ("Final Answer: \\boxed{42}", "an announcing label"),
    ("**Final Answer:** $\\boxed{42}$", "Markdown around the label"),
    ("Answer: \\boxed{42}", "an announcing label"),
    ("Total: \\boxed{42}", "an announcing label"),
    ("A: \\boxed{42}", "a one-letter label"),
    ("So the final answer is: \\boxed{42}", "a label after so"),
    ("Therefore, the number of apples Janet has is: \\boxed{42}", "a short subject and a verb"),
    ("The answer is \\boxed{42}. This is the final answer.", "an announcing sentence after"),
    ("\\boxed{42}\n\nSo the answer is 42.", "the box restated"),
    ("\\boxed{42}\n\nSo the answer is $42$ dollars.", "the box restated with a unit"),
    ("\\boxed{42}. The solution is complete.", "no value stated"),
    ("The answer is \\boxed{42}. Check: $6 \\times 7 = 42$.", "a check after"),
    ("The answer is \\boxed{42}.\n\nThe result follows from 6 times 7.", "a reason after"),
    ("\\boxed{42}, which checks out.", "words after the comma"),
    ("The answer is \\boxed{42}. I hope this helps!", "a closing line"),
    ("<answer>\\boxed{42}</answer>\nI hope this helps.", "a closing line after the answer block"),
    ("\\boxed{42}\n\n**Answer:** 42", "restated under a bold label"),
    ("The answer is \\boxed{42}\n\n**Note:** the units are apples", "a bold note in the next paragraph"),
    ("\\boxed{42}\n\nSo $x = 42$.", "the box restated as a value of x"),
    ("The final answer is $\\boxed{42}$. I hope it is correct.", "Minerva's closing line"),
]


@pytest.mark.parametrize(("reply", "why"), WRONG, ids=[why for _, why in WRONG])
def test_a_reply_that_does_not_give_the_box_as_its_answer_scores_zero(reply: str, why: str) -> None:
    """A label, a list or a later retraction around the gold's box scores 0."""
    assert graded(reply, "42" if "x - 1" not in reply else "x + 1") == 0.0, why


@pytest.mark.parametrize(("reply", "why"), RIGHT, ids=[why for _, why in RIGHT])
def test_a_reply_that_gives_the_box_as_its_answer_still_scores_one(reply: str, why: str) -> None:
    """Announcing labels, restatements, checks and closing lines keep the box's grade."""
    assert graded(reply, "42") == 1.0, why


def test_a_restated_fraction_is_the_same_answer_and_another_number_is_not() -> None:
    """The restatement is compared as text when the box is not a plain number."""
    assert graded("\\boxed{\\frac{1}{2}}. So the answer is $\\frac{1}{2}$.", "\\frac12") == 1.0
    assert graded("\\boxed{\\frac{1}{2}}. So the answer is 1.", "\\frac12") == 0.0


labels = st.sampled_from(["Lower bound", "Upper bound", "Estimate", "My guess", "Answer (rounded)",
                          "Answer to part (b)", "Intermediate result", "Partial answer", "Step 2", "Attempt 1",
                          "Approximate answer", "Sub-total", "Answer for n=3"])
takebacks = st.sampled_from(["Wait, that's wrong.", "Actually, it is {w}.", "Correction: {w}.", "Edit: {w}.",
                             "Hmm, no: {w}.", "Sorry, I made a mistake; it is {w}.", "Oops, the answer is {w}.",
                             "I am not sure about this.", "It could also be {w}.", "The correct answer is {w}.",
                             "On second thought the result is {w}.", "Maybe {w} instead.",
                             "Scratch that, {w}.", "However, the answer should be {w}.", "${w}$", "Thus {w}.",
                             "Therefore $x = {w}$.", "Is it {w}?", "So it is {w}.", "Hence the answer: {w}"])
values = st.integers(min_value=-10**6, max_value=10**6)
layouts = st.sampled_from(["{box}", "$\\boxed{{{v}}}$", "The answer is \\boxed{{{v}}}.", "Answer: $\\boxed{{{v}}}$."])


@settings(max_examples=150, deadline=None)
@given(labels, values, st.sampled_from(["{l}: \\boxed{{{v}}}", "**{l}:** $\\boxed{{{v}}}$", "{l}:\n\\boxed{{{v}}}"]))
def test_any_label_that_does_not_announce_the_answer_makes_the_box_unreadable(label: str, value: int,
                                                                              layout: str) -> None:
    """Generated labels before a colon: none of them announces the answer."""
    reply = layout.format(l=label, v=value)
    assert graded(reply, str(value)) == 0.0, reply


@settings(max_examples=150, deadline=None)
@given(values, values, st.sampled_from([", ", "; ", ", $", ",\\ "]))
def test_a_value_after_the_box_makes_a_list(value: int, other: int, joint: str) -> None:
    """Generated lists: the box, then another value after a comma or semicolon."""
    reply = f"The answer is $\\boxed{{{value}}}{joint}{other}$." if "$" in joint else \
        f"Answer: \\boxed{{{value}}}{joint}{other}"
    assert graded(reply, str(value)) == 0.0, reply


@settings(max_examples=200, deadline=None)
@given(values, values, takebacks, st.sampled_from([" ", "\n", "\n\n"]), layouts)
def test_a_later_sentence_that_takes_the_answer_back_makes_it_unreadable(value: int, other: int, takeback: str,
                                                                         gap: str, layout: str) -> None:
    """Generated retractions and other stated answers after the final box."""
    if other == value:
        other += 1
    box = layout.format(v=value, box=f"\\boxed{{{value}}}.")
    reply = f"{box}{gap}{takeback.format(w=other)}"
    assert graded(reply, str(value)) == 0.0, reply


@settings(max_examples=150, deadline=None)
@given(values, st.sampled_from(["So the answer is {v}.", "The answer is ${v}$.", "This is the final answer.",
                                "The result is {v}, as required.", "I hope this helps!", "Done.",
                                "The solution is complete.", "Check: {v} = {v}."]),
       st.sampled_from([" ", "\n", "\n\n"]))
def test_a_later_sentence_that_only_restates_or_closes_keeps_the_grade(value: int, after: str, gap: str) -> None:
    """Generated closing lines and restatements after the final box keep a score of 1."""
    reply = f"The answer is \\boxed{{{value}}}.{gap}{after.format(v=value)}"
    assert graded(reply, str(value)) == 1.0, reply


BLOCKS_WRONG = [
    ("<answer>\\boxed{41}<answer>\\boxed{42}</answer>", "an answer opened twice holds both boxes"),
    ("<answer>\\boxed{41}</answer>\n```\n<answer>\\boxed{42}</answer>\n```", "an answer block shown as code"),
    ("<answer>```\n\\boxed{42}\n```</answer>", "a box shown as code inside the answer"),
]


@pytest.mark.parametrize(("reply", "why"), BLOCKS_WRONG, ids=[why for _, why in BLOCKS_WRONG])
def test_an_answer_block_opened_twice_or_shown_as_code_is_not_the_gold(reply: str, why: str) -> None:
    """The answer block runs from its first opening tag, and fenced code is never an answer."""
    assert graded(reply, "42") == 0.0, why


def test_answer_blocks_closed_one_after_another_still_take_the_last() -> None:
    """A corrected answer in a later, closed block is still the final answer."""
    assert graded("<answer>\\boxed{41}</answer> Let me fix that. <answer>\\boxed{42}</answer>", "42") == 1.0


def test_a_later_formula_that_is_not_the_box_makes_it_unreadable() -> None:
    """A concluding formula with no number in it is compared as text with the box."""
    assert graded("$\\boxed{p - q}$\n\nThus $-(p - q)$.", "p - q") == 0.0
    assert graded("$\\boxed{p - q}$\n\nThus $p - q$.", "p - q") == 1.0
