"""A seventh writer, blind to the grader, wrote 800 right replies; 424 were refused (364 of the 740 with a box), most
for what is written after or around the box. The classes mended, in this file's own words over several golds, each
beside a wrong sibling in the same place that must still score 0: what lets a right reply through must not let a
take-back through."""

from __future__ import annotations

import itertools

import pytest

from bench._right_replies import score
from handlers.grading.spoken_arithmetic import number_in_words

GOLDS = ("42", "120", "\\frac{14}{3}")
QUESTION = "A shop sells 6 boxes of 7 pens each. How many pens does the shop sell?"
EARN = "Jo sells 6 cakes at $7 each. How much does Jo earn?"
EVALUATE = "Evaluate $99^2+99+1$."

RIGHT = (
    # the box in its sentence
    (QUESTION, "We multiply.\n\n$\\boxed{{{gold}}}$ is the answer to the question as posed."),
    (QUESTION, "We multiply.\n\nMultiplying, the count comes out to $\\boxed{{{gold}}}$."),
    (QUESTION, "We multiply.\n\nWe end up with $\\boxed{{{gold}}}$ pens."),
    (QUESTION, "We multiply.\n\n- Final answer: $\\boxed{{{gold}}}$\n- Method: one product"),
    (QUESTION, "We multiply.\n\n\u21d2 $\\boxed{{{gold}}}$"),
    (QUESTION, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$ (exactly, no rounding needed)."),
    (EARN, "Six cakes at seven dollars.\n\nSo Jo earns $\\boxed{{{gold}}}$ dollars."),
    # after the box: notes, warnings, offers, closings
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\n### Notes\n- No approximations were made.\n- One product."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\n---\n\n1. The boxes are taken as full.\n2. Pens count once."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nA common mistake is adding the numbers instead of multiplying."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nWould you like a similar problem to practise on?"),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nSo that is our answer."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nThat completes the computation."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$. Q.E.D."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nGiven data: 6, 7."),
    # the eighth writer's, mended after its unseen figure was taken
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nNote on the method: one product of the two counts."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nStudy tip: label every quantity you write down."),
    (QUESTION, "We multiply.\n\nWhich brings us to the answer: $\\boxed{{{gold}}}$"),
    (QUESTION, "We multiply.\n\nI'm confident the answer is $\\boxed{{{gold}}}$."),
    (QUESTION, "We multiply.\n\nThe program confirms the result: $\\boxed{{{gold}}}$"),
)
WRONG = (
    (QUESTION, "We multiply.\n\n$\\boxed{{{gold}}}$ is the approximate value we were asked for."),
    (QUESTION, "We multiply.\n\n$\\boxed{{{gold}}}$ is the number of pens in part (a)."),
    (QUESTION, "Six boxes make 43 pens, so $\\boxed{{{gold}}}$."),
    (QUESTION, "We multiply.\n\n- Draft answer: $\\boxed{{{gold}}}$\n- Method: one product"),
    (QUESTION, "We multiply.\n\nThe answer is $\\boxed{{{gold}}}$ (roughly, after rounding)."),
    (EARN, "Six cakes at seven dollars.\n\nSo Jo spends $\\boxed{{{gold}}}$ dollars."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\n### Notes\n- I am not confident in this.\n- Used the data once."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\n### Update\nI would not bet on it."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nA common mistake is this one: I added instead of multiplying."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nWould you like me to check whether it is right?"),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nSo that is not our answer."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nGiven data: 6, 7, 43."),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\nCommon error: I forgot a condition."),
    (QUESTION, "We multiply.\n\nI'm not confident the answer is $\\boxed{{{gold}}}$."),
    (QUESTION, "We multiply.\n\nMy friend confirms the result: $\\boxed{{{gold}}}$"),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\n```json\n{{\"final_answer\": \"43\"}}\n```"),
    (QUESTION, "The answer is $\\boxed{{{gold}}}$.\n\n```json\n{{\"answer\": {gold}, \"confidence\": \"low\"}}\n```"),
)


@pytest.mark.parametrize(("case", "gold"), list(itertools.product(RIGHT, GOLDS)))
def test_the_seventh_writers_closings_keep_the_box(case: tuple[str, str], gold: str) -> None:
    """Subjects after the box, computing words, bullets and arrows, exactness, verbs the question asks with, notes
    after a heading or a rule, generic warnings, offers, plain closings, given data and JSON restating the box."""
    question, template = case
    assert score(template.format(gold=gold), gold, "math", question)[0] == 1.0


@pytest.mark.parametrize(("case", "gold"), list(itertools.product(WRONG, GOLDS)))
def test_their_wrong_siblings_still_score_0(case: tuple[str, str], gold: str) -> None:
    """The same places holding a hedge, another part, another value, a draft, a verb the question does not ask
    with, a doubt in the notes, a confession, an offer to check, another number in data or JSON."""
    question, template = case
    assert score(template.format(gold=gold), gold, "math", question)[0] == 0.0


@pytest.mark.parametrize(
    ("reply", "gold"),
    [("So $\\boxed{{{gold}}}$ (forty-two).", "42"), ("So $\\boxed{{{gold}}}$, that is, one hundred twenty.", "120"),
     ("So $\\boxed{{{gold}}}$ \u2014 fourteen over three.", "\\frac{14}{3}")],
)
def test_the_box_restated_in_words_keeps_it(reply: str, gold: str) -> None:
    """A number written out after the box that is the box's number restates it."""
    assert score(reply.format(gold=gold), gold, "math", QUESTION)[0] == 1.0


@pytest.mark.parametrize("gold", GOLDS)
@pytest.mark.parametrize("other", ["forty-three", "one hundred twenty-one", "fifteen over three"])
def test_another_number_in_words_after_the_box_takes_it_back(gold: str, other: str) -> None:
    """Another number written out after the box's comma is a second value."""
    assert score(f"So $\\boxed{{{gold}}}$, namely {other}.", gold, "math", QUESTION)[0] == 0.0


@pytest.mark.parametrize("value", range(0, 2100, 7))
def test_numbers_in_words_read_as_their_value(value: int) -> None:
    """Generated: every number to 2,100 written out in words reads as itself."""
    units = ["", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
             "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
    tens = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]

    def spelled(number: int) -> str:
        if number < 20:
            return units[number] or "zero"
        if number < 100:
            return tens[number // 10] + (f"-{units[number % 10]}" if number % 10 else "")
        if number < 1000:
            rest = number % 100
            return f"{units[number // 100]} hundred" + (f" and {spelled(rest)}" if rest else "")
        rest = number % 1000
        return f"{spelled(number // 1000)} thousand" + (f" {spelled(rest)}" if rest else "")

    assert number_in_words(spelled(value)) == value


@pytest.mark.parametrize("garbage", ["", "forty-two apples", "the answer", "hundred", "two two", "minus", "over three"])
def test_words_that_are_not_one_number_read_as_none(garbage: str) -> None:
    """Words that are not wholly one number have no value."""
    assert number_in_words(garbage) is None


@pytest.mark.parametrize("gold", ["42", "120"])
def test_the_answer_again_as_json_keeps_the_box(gold: str) -> None:
    """A JSON block after the box holding the same final answer restates it."""
    reply = f"The answer is $\\boxed{{{gold}}}$.\n\n```json\n{{\"final_answer\": {gold}}}\n```"
    assert score(reply, gold, "math", QUESTION)[0] == 1.0
    spread = f"The answer is $\\boxed{{{gold}}}$.\n\n```json\n{{\n  \"final_answer\": \"{gold}\"\n}}\n```"
    assert score(spread, gold, "math", QUESTION)[0] == 1.0
    assert score(spread.replace(f'"{gold}"', '"43"'), gold, "math", QUESTION)[0] == 0.0


def test_a_box_after_so_whose_reason_states_its_value_is_announced() -> None:
    """``..., so \\boxed{42} is the number of pens``: the reason states 42, the subject after the box names the asked
    thing; a reason stating another value leaves the box unread."""
    right = "Six boxes of seven pens make 42 pens, so $\\boxed{42}$ is the number of pens."
    assert score(right, "42", "math", QUESTION)[0] == 1.0
    assert score(right.replace("make 42", "make 43"), "42", "math", QUESTION)[0] == 0.0


def test_the_computed_value_of_an_expression_asked_keeps_its_box() -> None:
    """A chain of arithmetic from the question's own expression, labelled as computing, ends in the answer."""
    reply = "We compute directly: $99^2+99+1 = 9801+99+1 = \\boxed{9901}$."
    assert score(reply, "9901", "math", EVALUATE)[0] == 1.0
    assert score("So $6 \\times 7 = \\boxed{42}$.", "42", "math", "What is $6 \\times 7$?")[0] == 1.0
