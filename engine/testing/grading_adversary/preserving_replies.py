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
    """The gold boxed, then a wrong box after a ``%``: a reader sees only the gold."""
    wrong = wrong_value(gold, rng)
    if wrong is None or commented(wrong):
        return None
    return f"The answer is $\\boxed{{{core(gold)}}}$.\n% draft: \\boxed{{{wrong}}}\n"
