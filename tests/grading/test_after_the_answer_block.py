"""What a reply says after its last ``</answer>``, and the end-of-turn tokens a server leaves behind.

Text after the last answer block was never read: ``<answer>42</answer> No, 43.`` and ``<answer>\\boxed{42}</answer>
Wait, that's wrong. The answer is 41.`` scored 1 against 42, though the box's own later sentences were read
(tests/grading/test_reply_after_the_box.py). What follows the block is now read by the same rules as what follows
a box: a take-back, a question, or another value stated or concluded makes the answer unreadable; a restatement,
a check or a closing line keeps it.

An end-of-turn token at the very end of a reply (``</s>``, ``<|im_end|>``, ``<|eot_id|>``, DeepSeek's
end of sentence in full-width bars), which some servers leave in the text, was read as words after the box and scored a
right reply 0. A run of them at the end is now the reply's end. Only at the end: text after one is read as before.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.grading.support import graded

WRONG_AFTER_THE_BLOCK = [
    "<answer>42</answer> No, 43.",
    "<answer>\\boxed{42}</answer> Actually, it's 43.",
    "<answer>\\boxed{42}</answer>\nWait, that's wrong. The answer is 41.",
    "<answer>42</answer>\n\nCorrection: 43.",
    "<answer>42</answer> ... or is it 43?",
    "<answer>42</answer>\nThe correct answer is 43.",
    "<answer>42</answer> <answer>43",
    "<answer>42</answer>\n\nHmm, I am not sure about this.",
    "<answer>\\boxed{42}</answer>\nWait, let me think about something else.",  # pinned at 1 before: "Wait" reopens it
]

RIGHT_AFTER_THE_BLOCK = [
    "<answer>42</answer>",
    "<answer>\\boxed{42}</answer> I hope this helps!",
    "<answer>\\boxed{42}</answer>\n\nSo the answer is 42.",
    "<answer>42</answer>\nCheck: $6 \\times 7 = 42$.",
    "<answer>x = 42</answer> That is, $x = 42$.",
    "We add the parts.\n<answer>\\boxed{42}</answer>\n",
]


@pytest.mark.parametrize("reply", WRONG_AFTER_THE_BLOCK)
def test_a_take_back_after_the_answer_block_makes_it_unreadable(reply: str) -> None:
    """A retraction, question or other value after the last </answer> scores 0."""
    assert graded(reply) == 0.0


@pytest.mark.parametrize("reply", RIGHT_AFTER_THE_BLOCK)
def test_a_restatement_or_closing_after_the_answer_block_keeps_the_grade(reply: str) -> None:
    """Nothing after the block, a closing line, a restatement or a check keeps 1."""
    assert graded(reply) == 1.0


values = st.integers(min_value=-10**6, max_value=10**6)
takebacks = st.sampled_from(["Wait, that's wrong.", "Actually, it is {w}.", "Correction: {w}.", "Edit: {w}.",
                             "Hmm, no: {w}.", "Sorry, I made a mistake; it is {w}.", "Oops, the answer is {w}.",
                             "The correct answer is {w}.", "Maybe {w} instead.", "Scratch that, {w}.",
                             "Thus {w}.", "Is it {w}?", "${w}$", "No.", "That's not right."])
blocks = st.sampled_from(["<answer>{v}</answer>", "<answer>\\boxed{{{v}}}</answer>",
                          "<answer>\n$\\boxed{{{v}}}$\n</answer>", "<answer>${v}$</answer>"])
gaps = st.sampled_from(["", " ", "\n", "\n\n"])


@settings(max_examples=200, deadline=None)
@given(values, values, blocks, gaps, takebacks)
def test_any_take_back_after_the_block_makes_it_unreadable(value: int, other: int, block: str, gap: str,
                                                           takeback: str) -> None:
    """Generated retractions and other values after the answer block score 0."""
    if other == value:
        other += 1
    reply = f"{block.format(v=value)}{gap}{takeback.format(w=other)}"
    assert graded(reply, str(value)) == 0.0, reply


@settings(max_examples=150, deadline=None)
@given(values, blocks, gaps, st.sampled_from(["So the answer is {v}.", "The answer is ${v}$.", "I hope this helps!",
                                              "Done.", "Let me know if you have questions.", "Check: {v} = {v}."]))
def test_any_restatement_after_the_block_keeps_the_grade(value: int, block: str, gap: str, after: str) -> None:
    """Generated closing lines and restatements after the answer block keep 1."""
    reply = f"{block.format(v=value)}{gap}{after.format(v=value)}"
    assert graded(reply, str(value)) == 1.0, reply


end_tokens = st.lists(st.sampled_from(["</s>", "<|im_end|>", "<|eot_id|>", "<|endoftext|>", "<eos>", "<|end|>",
                                       "<end_of_turn>", "<\uff5cend\u2581of\u2581sentence\uff5c>"]),
                      min_size=1, max_size=3)


@settings(max_examples=150, deadline=None)
@given(values, st.sampled_from(["The answer is \\boxed{{{v}}}.", "<answer>{v}</answer>", "$\\boxed{{{v}}}$"]),
       end_tokens, gaps)
def test_end_of_turn_tokens_at_the_end_are_the_replys_end(value: int, reply: str, tokens: list[str],
                                                          gap: str) -> None:
    """A right reply followed by end-of-turn tokens keeps 1."""
    assert graded(reply.format(v=value) + gap + gap.join(tokens), str(value)) == 1.0


@pytest.mark.parametrize("reply", [
    "The answer is \\boxed{42}.</s> No, 43.</s>",
    "\\boxed{42}<|im_end|>\n<|im_start|>user\nNo, it is 43.<|im_end|>",
    "<answer>42</answer></s>Actually, 43.",
])
def test_text_after_an_end_of_turn_token_is_still_read(reply: str) -> None:
    """Only a run of end tokens at the very end is dropped: a take-back after one still scores 0."""
    assert graded(reply) == 0.0
