"""A sixth attacker, aimed at the rules relaxed for recall (tests/grading/test_right_replies.py).

Once quantity and hedge words counted only in the box's own clause, and a plain ``not`` after the box no
longer took it back, replies like these scored 1 (written by an attacker who knew the relaxed rules, not
the code): a qualifier set off two clauses before the box (``The answer is at most, by the pigeonhole
argument, \\boxed{42}``); a later sentence that qualifies, conditions, attributes or transforms the box
(``This root is extraneous.``, ``If the dice are distinguishable.``, ``That's what the key says.``, ``Halve
it to get the answer.``); a later fragment (``Approximately.``, ``Doubled.``); a sentence before the box that
points to it and denies it (``The following is wrong.``). Each now scores 0; the right replies beside them
keep 1. A supposition the box's sentence goes on from (``Suppose the coin is fair. Then the answer is``) is
left alone: ``Assume WLOG that a < b. Then the answer is`` is how derivations are written.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from handlers.grading import extract_final_answer, grade_answer


def _score(reply: str, gold: str = "42") -> float:
    answer = extract_final_answer(reply)
    return grade_answer(answer, gold).score if answer is not None else 0.0


WRONG = [
    "The answer is at most, by the pigeonhole argument, \\boxed{42}.",
    "According to the answer key, which has a known typo, the answer is \\boxed{42}.",
    "The original answer, before the correction, was \\boxed{42}.",
    "Twice the answer, that is, the full perimeter, is \\boxed{42}.",
    "The extraneous solution, which fails the check, is \\boxed{42}.",
    "In my previous attempt, I got \\boxed{42}.",
    "The answer is \\boxed{42}. This root is extraneous.",
    "The answer is \\boxed{42}. If the dice are distinguishable.",
    "The answer is \\boxed{42}. Unless I have miscounted.",
    "The answer is \\boxed{42}. This is only an upper bound.",
    "The answer is \\boxed{42}. Halve it to get the answer.",
    "The answer is \\boxed{42}. Please disregard the boxed value.",
    "The answer is \\boxed{42}. Strike that.",
    "The answer is \\boxed{42}. I haven't verified it.",
    "The answer is \\boxed{42}. Lol no.",
    "The answer is \\boxed{42}. That's the previous estimate.",
    "The answer is \\boxed{42}. That's what my friend got.",
    "The answer is \\boxed{42}. So says the answer key.",
    "The answer is \\boxed{42}. The above is a lower bound.",
    "The answer is \\boxed{42}. We reject this value.",
    "The answer is \\boxed{42}. Now multiply by 3.",
    "The answer is \\boxed{42}. Except for the degenerate case, which we remove.",
    "The answer is \\boxed{42}. The correct count is 21.",
    "The answer is \\boxed{42}. Really it should be 43.",
    "The answer is \\boxed{42}. This is too large.",
    "The answer is \\boxed{42}. But this counts ordered pairs.",
    "The answer is \\boxed{42}. I misread the problem.",
    "The answer is \\boxed{42}. That's not what was asked.",
    "The value is \\boxed{42}, e.g. for the case n = 3 only.",
    "So the answer is \\boxed{42}.\n\nThis counts ordered pairs; the problem asks for unordered pairs, so we should "
    "divide by two.",
    "The following is only an upper bound.\n\n\\boxed{42}",
    "The answer below is wrong.\n\n\\boxed{42}",
    "My guess is as follows.\n\n\\boxed{42}",
]

RIGHT = [
    "Using the formula above, the result is \\boxed{42}.",
    "Since the fraction simplifies, the answer is \\boxed{42}.",
    "Ignoring the constant term, which cancels, the sum is \\boxed{42}.",
    "The upper bound is attained, so the maximum is \\boxed{42}.",
    "Thus the least possible value is \\boxed{42}.",
    "Given that all the steps check out, the total is \\boxed{42}.",
    "Using our earlier result, the answer is \\boxed{42}.",
    "The answer is \\boxed{42}. There are no other solutions.",
    "The answer is \\boxed{42}. It is not hard to check this directly.",
    "The answer is \\boxed{42}. The other root is rejected since it is negative.",
    "The answer is \\boxed{42}. This is consistent with our earlier estimate.",
    "The answer is \\boxed{42}. But let me double check: yes, it holds.",
    "The answer is \\boxed{42} \u2713",
    "I made a mistake above. The correct answer is \\boxed{42}.",
    "Assume WLOG that a < b. Then the answer is \\boxed{42}.",
    "The sum of all primes below 50 is 328. So the answer is \\boxed{42}.",
    "Here is the final computation: 6 times 7. The answer is \\boxed{42}.",
    "It follows that x is at most 5. The answer is \\boxed{42}.",
]


@pytest.mark.parametrize("reply", WRONG, ids=[reply[:50] for reply in WRONG])
def test_a_reply_that_qualifies_or_takes_back_the_box_scores_zero(reply: str) -> None:
    """A qualifier anywhere in the stating part, or a sentence around the box that undoes it, scores 0."""
    assert _score(reply) == 0.0, extract_final_answer(reply)


@pytest.mark.parametrize("reply", RIGHT, ids=[reply[:50] for reply in RIGHT])
def test_the_same_words_used_to_state_the_answer_score_one(reply: str) -> None:
    """A reason in an opening clause, a confirmation after the box, or a correction before it keeps the answer."""
    assert _score(reply) == 1.0, extract_final_answer(reply)


_QUALIFIERS = ["at most", "at least", "roughly", "approximately", "twice", "half of", "less than", "the previous"]
_ASIDES = ["by the pigeonhole argument", "after all the cases", "as shown above", "in the end", "that is"]
_LATER = ["This root is extraneous.", "This is only an upper bound.", "If n is odd.", "Unless I miscounted.",
          "Approximately.", "Doubled.", "Strike that.", "That's the naive answer.", "We reject this value.",
          "Now divide by 2.", "So says the textbook."]


@settings(max_examples=60, deadline=None)
@given(qualifier=st.sampled_from(_QUALIFIERS), aside=st.sampled_from(_ASIDES), value=st.integers(1, 10**6))
def test_a_qualifier_set_off_from_the_box_by_an_aside_still_counts(qualifier: str, aside: str, value: int) -> None:
    """``The answer is <qualifier>, <aside>, \\boxed{v}`` scores 0 whatever the aside and the value."""
    assert _score(f"The answer is {qualifier}, {aside}, \\boxed{{{value}}}.", str(value)) == 0.0


@settings(max_examples=60, deadline=None)
@given(later=st.sampled_from(_LATER), value=st.integers(1, 10**6), gap=st.sampled_from([" ", "\n\n"]))
def test_a_later_sentence_that_qualifies_the_box_takes_it_back(later: str, value: int, gap: str) -> None:
    """A later sentence or fragment that conditions, bounds, attributes or transforms the box scores 0."""
    assert _score(f"Therefore, the answer is $\\boxed{{{value}}}$.{gap}{later}", str(value)) == 0.0
