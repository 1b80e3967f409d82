"""An eighth attacker, aimed at the rules relaxed for recall (tests/grading/test_seventh_attacker.py).

Told the relaxations but not the code, it wrote 791 wrong replies that scored 1. Most were not new holes: the
sentence right before a box was read only when it pointed forward (``The following is wrong.``), so ``Not the
answer.``, ``The answer is 145.`` or ``Modulo 1000.`` on the line above ``\\boxed{144}`` never counted. Now it
is read for what denies, doubts, bounds or conditions the answer, or gives another one; a sentence about the
work (``There are no other solutions.``, ``Third Bag: 84/2 = 42``) still does not govern the box, and a box
whose sentence corrects (``The correct answer is``) mends an admitted mistake before it. Also closed: a line
between a heading and its box, underlined and struck-out headings, a formula or sign for a table's label, later
rows and code blocks after the answer (a tool output of ``43``), a think block after the answer, doubt marks
(``(?)``, a shrug), reported and spelled-out values (``I computed 43 in Python.``, ``It's forty-three.``), and a
list of withdrawals (``I lied.``, ``Let me recompute.``, ``Plus or minus one.``). 89 of the 791 still score 1;
docs/grading.md says which kinds.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.grading.support import graded

BOX = "The answer is $\\boxed{42}$. "

WRONG = [
    "Not the answer.\n\n\\boxed{42}",
    "This isn't the answer.\n\\boxed{42}",
    "I made an error.\n\n\\boxed{42}",
    "- not the final answer\n\\boxed{42}",
    "> Not the answer.\n\n\\boxed{42}",
    "The answer is 145.\n\n\\[\\boxed{42}\\]",
    "Final answer: 43\n$\\boxed{42}$",
    "Either 43 or\n\n\\boxed{42}",
    "This holds only if n is even\n\n\\boxed{42}",
    "Divide this by 2 to get the answer.\n\n\\boxed{42}",
    "Modulo 1000.\n\n\\boxed{42}",
    "Placeholder\n\n\\boxed{42}",
    "### Final Answer\n\nThis is wrong.\n\n\\boxed{42}",
    "### Final Answer\n\nMaybe.\n\n\\boxed{42}",
    "Wrong Answer\n============\n\n$\\boxed{42}$",
    "### ~~Final Answer~~\n\n\\boxed{42}",
    "### Final Answer?\n\n\\boxed{42}",
    "The answer is 43.\n\n<answer>42</answer>",
    "| Final answer | $\\boxed{42}$ |\n| Corrected answer | 43 |",
    "| $x \\ne$ | $\\boxed{42}$ |",
    "| ~ | $\\boxed{42}$ |",
    BOX + "I hope it is correct, but it isn't.",
    BOX + "Should we subtract one?",
    BOX + "I lied.",
    BOX + "Let me recompute.",
    BOX + "Plus or minus one.",
    BOX + "(+1 for the origin)",
    BOX + "(?)",
    BOX + "??",
    BOX + "\U0001f914",
    BOX + "43 is right.",
    BOX + "I computed 43 in Python.",
    BOX + "It's forty-three.",
    BOX + "A second, more careful count of the cases that I did just now gives 43.",
    "The answer is \\boxed{42}.\n<think>Wait, it is 43, the box is wrong.</think>",
    BOX + "\n\n```output\n43\n```",
    BOX + "\n\n```\nNo.\n```",
]

RIGHT = [
    "Adding the two cases gives 30 + 12 = 42 points\n\n\\boxed{42}",
    "Third Bag: 84/2 = 42\n\n$\\boxed{42}$",
    "There are no other solutions.\n\n\\boxed{42}",
    "There is no doubt. The answer is \\boxed{42}.",
    "I made a mistake above. The correct answer is \\boxed{42}.",
    "### Final Answer\n\n\\boxed{42}",
    "Final Answer\n============\n\n\\boxed{42}",
    "| Step | Value |\n|---|---|\n| Total | 43 |\n| Final answer | $\\boxed{42}$ |",
    BOX + "Hope that helps!",
    BOX + "Does that make sense?",
    "The final answer is $\\boxed{42}$. I hope it is correct.",
    BOX + "It follows from 6 times 7.",
    BOX + "Python says 42.",
    BOX + "Keep practicing problems like this one!",
    "<think>The answer is 43? No, 42.</think>\nThe answer is $\\boxed{42}$.",
    BOX + "\n\n```python\nprint(6*7)\n```\n```output\n42\n```",
    "```python\nprint(6*7)\n```\n```output\n42\n```\nSo the answer is $\\boxed{42}$.",
]


@pytest.mark.parametrize("reply", WRONG)
def test_the_eighth_attackers_replies_score_zero(reply: str) -> None:
    """Each pinned wrong reply scores 0."""
    assert graded(reply) == 0.0


@pytest.mark.parametrize("reply", RIGHT)
def test_right_replies_in_the_same_notation_keep_one(reply: str) -> None:
    """The same notation used rightly scores 1."""
    assert graded(reply) == 1.0


values = st.integers(min_value=-10**6, max_value=10**6)
denials_above = st.sampled_from(["Not the answer.", "This isn't the answer.", "This is not it.", "I made an error.",
                                 "Wrong.", "The answer is {w}.", "Final answer: {w}", "Either {w} or",
                                 "This holds only if n is even", "Lower bound.", "Modulo 1000.", "In base 8.",
                                 "Placeholder", "Possibly wrong.", "Maybe.", "This does not satisfy the constraints."])
layouts = st.sampled_from(["{line}\n\\boxed{{{v}}}", "{line}\n\n$\\boxed{{{v}}}$", "{line}\n\\[\\boxed{{{v}}}\\]",
                           "### Final Answer\n\n{line}\n\n\\boxed{{{v}}}", "{line}\n\n<answer>{v}</answer>"])


@settings(max_examples=200, deadline=None)
@given(values, values, denials_above, layouts)
def test_a_denial_or_another_answer_right_above_the_box_is_read_with_it(value: int, other: int, line: str,
                                                                        layout: str) -> None:
    """Generated lines above the box that deny, bound or replace it: 0."""
    if other == value:
        other += 1
    reply = layout.format(line=line.format(w=other), v=value)
    assert graded(reply, str(value)) == 0.0, reply


work_above = st.sampled_from(["Adding the two cases gives {v} points", "Third Bag: {v}",
                              "There are no other solutions.",
                              "This is not hard to check by hand.", "We add the parts.", "Hence the total is {v}.",
                              "Let me double-check the arithmetic once more."])


@settings(max_examples=150, deadline=None)
@given(values, work_above, layouts)
def test_work_right_above_the_box_keeps_it(value: int, line: str, layout: str) -> None:
    """Generated work lines above the box: 1."""
    reply = layout.format(line=line.format(v=value), v=value)
    assert graded(reply, str(value)) == 1.0, reply


@settings(max_examples=100, deadline=None)
@given(values, values, st.sampled_from(["```output\n{w}\n```", "```\nNo.\n```", "```python\n# actually it is {w}\n```",
                                        "<think>Wait, it is {w}.</think>", "<think>Hmm.</think>"]))
def test_code_or_thinking_after_the_answer_is_read_as_later_text(value: int, other: int, after: str) -> None:
    """Generated code blocks and think blocks after the final box that say something else: 0."""
    if other == value:
        other += 1
    reply = f"The answer is $\\boxed{{{value}}}$.\n\n{after.format(w=other)}"
    assert graded(reply, str(value)) == 0.0, reply
