"""Meaning-preserving operators on a whole reply: what a reader sees is the gold.

Reasoning, an answer block and a wrong box that no reader sees (a ``%`` comment) leave
the visible final answer equal to the gold.
"""

from __future__ import annotations

import random

from engine.testing.grading_adversary.changing_replies import wrong_value
from engine.testing.grading_adversary.registry import preserving_reply
from engine.testing.grading_adversary.shapes import commented, core


@preserving_reply
def reasoning_then_box(gold: str, rng: random.Random) -> str | None:
    """A ``<think>`` block that tries a wrong box, then the gold boxed."""
    wrong = wrong_value(gold, rng) or "0"
    if commented(wrong):
        return None
    return (f"<think>Maybe it is $\\boxed{{{wrong}}}$? No, check again.</think>\n"
            f"The answer is $\\boxed{{{core(gold)}}}$.")


@preserving_reply
def answer_block(gold: str, rng: random.Random) -> str | None:
    """The gold inside ``<answer>...</answer>``, boxed or not."""
    body = rng.choice(["\\boxed{{{}}}", "${}$", "{}"]).format(core(gold))
    return f"Working it out step by step.\n<answer>{body}</answer>"


@preserving_reply
def wrong_box_in_comment(gold: str, rng: random.Random) -> str | None:
    """A wrong box in a ``%`` comment, then the gold boxed: a reader sees only the gold. (A comment after the
    answer is read as a later sentence, so a draft box there takes the answer back: it is not this case.)"""
    wrong = wrong_value(gold, rng)
    if wrong is None or commented(wrong):
        return None
    return f"% draft: \\boxed{{{wrong}}}\nThe answer is $\\boxed{{{core(gold)}}}$.\n"


_CLOSING_SENTENCES = [
    "Therefore, the answer is {box}.", "So, the final answer is {box}.", "The final answer is: {box}",
    "**Final Answer**\n\\[\n{box}\n\\]", "### Final Answer\n\n{box}", "Answer: {box}",
    "Using the formula above, the result is {box}.", "Since the fraction simplifies, the answer is {box}.",
    "From the previous step, the answer is {box}.", "Ignoring the constant term, which cancels, the sum is {box}.",
    "The upper bound is attained, so the maximum is {box}.", "Thus the least possible value is {box}.",
    "Given that all the steps check out, the total is {box}.", "This gives us {box}.",
    "**Therefore, the total is {box}.**", "Thus, the total is **{box}**.", "It follows that the answer is {box}.",
    "Hence, the answer must be {box}.", "We conclude that the answer is {box}.", "<answer>{box}</answer>",
]
_CONFIRMING_SENTENCES = [
    "", "This is the final answer.", "I hope it is correct.", "No other value satisfies the equation.",
    "There are no other solutions.", "This is consistent with our earlier estimate.",
    "It is not hard to check this directly.", "We don't need to consider the other case.",
    "The other root is rejected since it is negative.", "This agrees with the approximate value from the graph.",
    "I'm confident in this answer.", "Both methods give the same result.", "\u2713", "---",
    "We can double-check by substituting back.", "It cannot be smaller.",
]


@preserving_reply
def model_style_ending(gold: str, rng: random.Random) -> str | None:
    """The gold boxed in a closing sentence as models write them (a reason or a superlative in an earlier
    clause, Markdown bold around it), then a sentence that confirms it (``There are no other solutions.``,
    ``It is not hard to check this directly.``, a check mark)."""
    box = f"$\\boxed{{{core(gold)}}}$"
    if commented(box):
        return None
    closing = rng.choice(_CLOSING_SENTENCES).format(box=box)
    return f"{closing}\n\n{rng.choice(_CONFIRMING_SENTENCES)}".rstrip()
