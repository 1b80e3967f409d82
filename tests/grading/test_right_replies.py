"""Right replies written as models end their solutions are read as right.

A sound grader can refuse everything; these replies keep it honest about recall. They were
written for this project without reading the grader (bench/_right_replies.py says how), in
the closing styles of several model families, and each gives its gold as its final answer.
"""

from __future__ import annotations

from bench._right_replies import FOURTH_CORPUS, SECOND_CORPUS, THIRD_CORPUS, load, recall, score

REFUSED_CEILING = 60
"""Replies with a box or an answer block the grader may refuse: 56 of 2,306 when this was set (math-verify,
given the whole reply, refuses 54). The refused ones are equations with a compound left side
(``\\boxed{x + y = 17}``), counted nouns the grader does not know (``\\boxed{15} popsicles``) and remarks it
reads with the answer (``(in dollars)``); docs/grading.md lists them."""

ROWS = load()


def test_right_replies_with_a_box_or_an_answer_block_are_read_as_right() -> None:
    """At most the ceiling of 2,306 right replies with a box or an answer block score 0."""
    found = recall(ROWS)
    assert found.marked > 2000
    shown = "\n".join(f"{row.style}: {row.reply[-160:]!r} read as {row.read!r} (gold {row.gold!r})"
                      for row in found.refused_marked[:20])
    assert len(found.refused_marked) <= REFUSED_CEILING, f"{len(found.refused_marked)} refused:\n{shown}"


def test_closing_styles_of_every_model_family_are_read() -> None:
    """Each boxed closing style (R1, QwQ, Llama 3, Qwen2.5-Math, GPT-4o Markdown, apollo's) loses at most 2%."""
    found = recall([row for row in ROWS if row["style"] not in {"gsm8k_cot", "minerva_fewshot", "equation_form",
                                                                  "mixed_endings"}])
    for style, (replies, refused) in found.per_style.items():
        assert refused <= 0.02 * replies, f"{style}: {refused} of {replies} refused"


def test_a_sentence_that_confirms_the_box_keeps_it() -> None:
    """Checks, notes and negations about something else after the box leave the answer as it is."""
    for after in ("There are no other solutions.", "It is not hard to check this directly.", "\u2713",
                  "We don't need to consider the other case.", "This agrees with the approximate value.",
                  "The other root is rejected since it is negative.", "I'm confident in this answer.", "---"):
        assert score(f"Therefore, the answer is $\\boxed{{42}}$.\n\n{after}", "42")[0] == 1, after


def test_a_sentence_that_denies_the_box_still_takes_it_back() -> None:
    """The negations that deny the answer itself after the box still make it unreadable."""
    for after in ("No.", "Not quite.", "That's not right.", "I'm not sure.", "This doesn't work.", "It isn't 42.",
                  "The answer is not 42.", "Never mind.", "That can't be right.", "It could also be 43.",
                  "But 43 fits better.", "I am not confident in this.", "\u2717", "Definitely not.",
                  "Please ignore the above.", "This answer is rejected.", "The real answer is different.",
                  "I wouldn't bet on it.", "Never mind that answer."):
        assert score(f"Therefore, the answer is $\\boxed{{42}}$. {after}", "42")[0] == 0, after


def test_a_box_from_an_earlier_attempt_is_not_the_answer() -> None:
    """A sentence that places the box in an earlier attempt or draft reads it with the box, in any clause."""
    for sentence in ("In my previous attempt, I got $\\boxed{42}$.", "On the first try, we get $\\boxed{42}$.",
                     "In an earlier draft, the answer was $\\boxed{42}$."):
        assert score(sentence, "42")[0] == 0, sentence
    assert score("Using our earlier result, the answer is $\\boxed{42}$.", "42")[0] == 1


SECOND_REFUSED_CEILING = 25
"""Of the second corpus's 1,500 replies, graded with their questions as an episode grades them: 21 refused when
this was set. Its unseen half (745) went from 207 refused (without questions) to 9 while the rules were mended
against the other half (the halves share the writer's templates). The refused ones are a scalar factored out of
a matrix, units and nouns the question does not name, and a few sentences off the lists."""


def test_a_second_set_of_right_replies_in_thirty_other_styles_is_read_as_right() -> None:
    """At most the ceiling of the second corpus's 1,500 replies (five languages among them) score 0."""
    found = recall(load(SECOND_CORPUS))
    assert found.marked == 1500
    shown = "\n".join(f"{row.style}: {row.reply[-160:]!r} read as {row.read!r} (gold {row.gold!r})"
                      for row in found.refused_marked[:20])
    assert len(found.refused_marked) <= SECOND_REFUSED_CEILING, f"{len(found.refused_marked)} refused:\n{shown}"


THIRD_REFUSED_CEILING = 27
"""Of the third corpus's 807 replies with a box or an answer block: 259 refused when it was first measured, unseen;
22 after the rules were mended against it (Italian, Portuguese, Japanese and Korean announcements, worked steps
with boxed intermediate results, an exact answer beside its decimal, align blocks, check marks before a label,
``dollars in total``, restatements with digit groups). The rest are lines that run into the box's sentence without
a full stop, and a few off the lists."""


def test_a_third_set_of_right_replies_by_another_writer_is_read_as_right() -> None:
    """At most the ceiling of the third corpus's boxed replies score 0 (its 393 unboxed ones are refused)."""
    found = recall(load(THIRD_CORPUS))
    assert (found.marked, found.unmarked) == (807, 393)
    shown = "\n".join(f"{row.style}: {row.reply[-160:]!r} read as {row.read!r} (gold {row.gold!r})"
                      for row in found.refused_marked[:20])
    assert len(found.refused_marked) <= THIRD_REFUSED_CEILING, f"{len(found.refused_marked)} refused:\n{shown}"


FOURTH_REFUSED_CEILING = 38
"""Of the fourth corpus's 930 replies with a box or an answer block: 529 refused when it was first measured, unseen;
34 after the rules were mended against it (nine more languages, end-of-proof marks, emoji, ``\\therefore``, a quoted
question, ``as the requested value``, an offer to explain more), 37 after two attackers' rules. 30 of the rest put
the answer first and then work that states other values, which reads as a later answer; the grader cannot tell the
two apart, so it refuses."""


def test_a_fourth_set_of_right_replies_by_another_writer_is_read_as_right() -> None:
    """At most the ceiling of the fourth corpus's boxed replies score 0 (its 270 without a box or block are refused,
    except a ``\\fbox``, which is read as a box)."""
    found = recall(load(FOURTH_CORPUS))
    assert (found.marked, found.unmarked) == (930, 270)
    shown = "\n".join(f"{row.style}: {row.reply[-160:]!r} read as {row.read!r} (gold {row.gold!r})"
                      for row in found.refused_marked[:20])
    assert len(found.refused_marked) <= FOURTH_REFUSED_CEILING, f"{len(found.refused_marked)} refused:\n{shown}"
