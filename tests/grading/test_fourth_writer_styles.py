"""Right replies in a fourth writer's styles, and the wrong replies beside each that must still score 0.

A fourth writer, blind to the grader, wrote 1,200 right replies in 40 styles (``right_replies_fourth.jsonl.gz``).
Measured unseen, 529 of its 930 replies with a box or an answer block were refused: announcements in nine more
languages, ``$\\blacksquare$`` after the box, emoji around it, ``\\therefore`` before it, ``is the required value``
and ``as the requested value`` after it, an offer to explain more, and ``as above`` read as a bound. Each rule
below is closed: a word off its list still leaves the box unread.
"""

from __future__ import annotations

import itertools

import pytest

from tests.grading.support import graded

ANNOUNCEMENTS = {
    "dutch": ["Het antwoord is dus", "Dus het antwoord is", "Het eindantwoord is", "We vinden dus"],
    "swedish": ["Svaret \u00e4r allts\u00e5", "Allts\u00e5 \u00e4r svaret", "Svar:", "Vi f\u00e5r"],
    "polish": ["**Odpowied\u017a:**", "Zatem odpowied\u017a to", "Ostateczny wynik wynosi", "Otrzymujemy"],
    "ukrainian": ["**\u0412\u0456\u0434\u043f\u043e\u0432\u0456\u0434\u044c:**",
                  "\u041e\u0442\u0436\u0435, \u0432\u0456\u0434\u043f\u043e\u0432\u0456\u0434\u044c:"],
    "turkish": ["**Cevap:**", "Sonu\u00e7 olarak cevap", "Yan\u0131t:"],
    "vietnamese": ["V\u1eady \u0111\u00e1p \u00e1n l\u00e0", "\u0110\u00e1p s\u1ed1:",
                   "Do \u0111\u00f3, k\u1ebft qu\u1ea3 l\u00e0"],
    "indonesian": ["Jadi, jawabannya adalah", "Dengan demikian, hasil akhirnya adalah", "Jawaban:"],
    "arabic": ["\u0625\u0630\u0646\u060c \u0627\u0644\u0625\u062c\u0627\u0628\u0629 \u0627\u0644\u0646\u0647\u0627"
               "\u0626\u064a\u0629 \u0647\u064a", "\u0627\u0644\u062c\u0648\u0627\u0628:"],
    "hindi": ["\u0905\u0924\u0903 \u0905\u092d\u0940\u0937\u094d\u091f \u0909\u0924\u094d\u0924\u0930",
              "\u0907\u0938\u0932\u093f\u090f \u0909\u0924\u094d\u0924\u0930"],
}
HEDGES = {
    "dutch": "misschien niet", "swedish": "kanske inte", "polish": "chyba nie", "ukrainian": "\u043c\u043e\u0436\u043b"
    "\u0438\u0432\u043e \u043d\u0435", "turkish": "belki de\u011fil", "vietnamese": "c\u00f3 l\u1ebd kh\u00f4ng",
    "indonesian": "mungkin bukan", "arabic": "\u0631\u0628\u0645\u0627 \u0644\u064a\u0633",
    "hindi": "\u0936\u093e\u092f\u0926 \u0928\u0939\u0940\u0902",
}
"""'Maybe not' in each language: a word the announcement list does not hold."""
LANGUAGE_CASES = [(language, phrase) for language, phrases in ANNOUNCEMENTS.items() for phrase in phrases]


@pytest.mark.parametrize(("language", "announcement"), LANGUAGE_CASES)
def test_an_announcement_in_another_language_reads_the_box(language: str, announcement: str) -> None:
    """``Het antwoord is dus $\\boxed{42}$.``: the whole sentence only announces the box."""
    closing = " \u0939\u0948\u0964" if language == "hindi" else "."
    assert graded(f"Some working.\n\n{announcement} $\\boxed{{42}}${closing}") == 1.0


@pytest.mark.parametrize(("language", "announcement"), LANGUAGE_CASES)
def test_a_hedge_in_that_language_before_the_box_still_refuses(language: str, announcement: str) -> None:
    """A word off the list (``misschien niet``, maybe not) leaves the sentence unread, so the box is too."""
    assert graded(f"Some working.\n\n{announcement} {HEDGES[language]} $\\boxed{{42}}$.") == 0.0


def test_hindi_says_is_not_after_the_box_and_refuses() -> None:
    """``... $\\boxed{42}$ \u0928\u0939\u0940\u0902 \u0939\u0948\u0964`` (is not): only the copula alone closes."""
    assert graded("\u0905\u0924\u0903 \u0909\u0924\u094d\u0924\u0930 $\\boxed{42}$ \u0928\u0939\u0940\u0902 \u0939"
                  "\u0948\u0964") == 0.0


ENDINGS = ["The answer is $\\boxed{42}$.", "Therefore the answer is $\\boxed{42}$.", "$$\\boxed{42}$$"]
QED_MARKS = ["$\\blacksquare$", "$\\square$", "\\(\\Box\\)", "$\\qed$", "\\hfill $\\blacksquare$"]


@pytest.mark.parametrize(("ending", "mark"), list(itertools.product(ENDINGS, QED_MARKS)))
def test_an_end_of_proof_mark_after_the_box_keeps_it(ending: str, mark: str) -> None:
    """``$\\blacksquare$`` closes a proof, as the \u220e mark does."""
    assert graded(f"{ending} {mark}") == 1.0


@pytest.mark.parametrize(("ending", "mark"), list(itertools.product(ENDINGS, QED_MARKS)))
def test_an_end_of_proof_mark_does_not_cover_a_later_correction(ending: str, mark: str) -> None:
    """``$\\blacksquare$ Wait, it is 43.``: the mark closes nothing the next sentence reopens."""
    assert graded(f"{ending} {mark} Wait, it is 43.") == 0.0


POINTED = ["\U0001f3af Final answer: $\\boxed{42}$ \u2728", "\U0001f4cc **Answer:** $\\boxed{42}$ \U0001f973",
           "And there we have it \U0001f973 \u2192 $\\boxed{42}$", "$$\\therefore\\quad \\boxed{42}$$",
           "\u2234 $\\boxed{42}$", "Hence $\\boxed{42}$ is the required value.",
           "All of this leads to $\\boxed{42}$ as the requested value.", "This leads us to $\\boxed{42}$.",
           "**Final answer (answer box):** \\boxed{42}",
           'So, answering the question "How many are not red?": the answer is $\\boxed{42}$.',
           'The answer to the question \u201cWhat is $6 \\times 7$?\u201d is $\\boxed{42}$.']


@pytest.mark.parametrize("reply", POINTED)
def test_marks_and_phrases_that_point_to_the_box_keep_it(reply: str) -> None:
    """A target, a pin, an arrow, \\therefore, ``there we have it`` and ``leads to`` announce the box."""
    assert graded(reply) == 1.0


@pytest.mark.parametrize("reply", [
    "\U0001f3af Not the final answer: $\\boxed{42}$", "\U0001f3af Final answer: $\\boxed{42}$ \u2728 not really",
    "And there we have it \U0001f973 \u2192 $\\boxed{42}$, or maybe 43", "$$\\therefore\\quad 43 \\neq \\boxed{42}$$",
    "Hence $\\boxed{42}$ is the required value only if $n$ is even.",
    "All of this mistakenly leads to $\\boxed{42}$.", "All of this leads to $\\boxed{42}$ as a lower bound.",
    "Hence $\\boxed{42}$ is the wrong value.", "It is above $\\boxed{42}$.",
    "**Final answer (answer box, unsure):** \\boxed{42}",
    'So, answering the question "How many?" wrongly, the answer is $\\boxed{42}$.',
    'Answering the question "How many?": the answer is probably $\\boxed{42}$.',
])
def test_the_same_marks_and_phrases_beside_a_hedge_still_refuse(reply: str) -> None:
    """Each pointer only drops itself: a denial, a bound or a condition beside it is still read."""
    assert graded(reply) == 0.0


@pytest.mark.parametrize("offer", [
    "If any step above is unclear, let me know in the comments and I can expand on it.",
    "*If anything is confusing, feel free to ask.*", "Let me know if you'd like another approach!",
    "Feel free to ask if anything is unclear.",
])
def test_an_offer_to_explain_more_keeps_the_box(offer: str) -> None:
    """A courtesy that offers more explanation says nothing of the value."""
    assert graded(f"The answer is $\\boxed{{42}}$.\n\n---\n{offer}") == 1.0


@pytest.mark.parametrize("offer", [
    "If any step above is unclear, let me know; it might be 43.", "Let me know if you think it is 43.",
    "If anything is unclear, let me know, since I am not sure.",
])
def test_an_offer_that_holds_a_value_or_a_doubt_still_refuses(offer: str) -> None:
    """The courtesy stops at a digit: ``Let me know if you think it is 43.`` is another value."""
    assert graded(f"The answer is $\\boxed{{42}}$.\n\n{offer}") == 0.0


def test_as_above_refers_back_and_does_not_bound_the_box() -> None:
    """``Working through the problem as above gives the result below.`` over an answer block points to it."""
    reply = "Working through the problem as above gives the result below.\n\n<answer>\n$42$\n</answer>"
    assert graded(reply) == 1.0
