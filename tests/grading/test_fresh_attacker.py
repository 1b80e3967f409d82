"""A fresh attacker's wrong answers (issue 30: examples stand for a class), each graded 0.

Written after the grader was declared sound, by someone who had not built it: answers built
to be wrong but plausibly graded right. The rows marked ``was 1`` scored 1 before the design
changes they led to (closed Unicode table, case and hyphens in text, ``1/2x``, improper mixed
numbers, ``\\sin^{-1}``, names out of order, ``~~``, ``\\log`` without a base, intervals with
ends out of order, and boxes read with what is written against them). Golds are hand-written
unless the row names a dataset (``math500``: ``../shared/data/math500.jsonl``).
"""

from __future__ import annotations

import pytest

from handlers.grading import extract_final_answer, grade_answer

# (answer, gold, why it is wrong)
LOOKALIKES = [
    ("①②", "12", "two circled list labels, not twelve (was 1)"),
    ("⑴⑵", "12", "parenthesized labels (was 1)"),
    ("⒈⒉", "12", "labels with full stops (was 1)"),
    ("③④", "34", "circled labels (was 1)"),
    ("㉑", "21", "a circled label (was 1)"),
    ("2ⁿ", "2n", "a superscript letter is a power (was 1)"),
    ("xⁿ", "xn", "a power (was 1)"),
    ("aₙ", "an", "a subscript letter is an index (was 1)"),
    ("xⁱ", "xi", "a power of i (was 1)"),
    ("2ᵃ", "2a", "a modifier letter raised (was 1)"),
    ("2⁽³⁾", "6", "superscript parentheses: 2 to the (3)"),
    ("٤٢", "24", "Arabic-Indic 42"),
    ("\uff14\uff12", "24", "full-width 42"),
    ("\U0001d7d2\U0001d7d0", "4", "mathematical bold 42"),
    ("4\u00a02", "42", "a no-break space between digits is layout"),
    ("4\u20092", "42", "a thin space between digits"),
    ("4\u03362", "42", "a combining stroke through the 4"),
    ("5\u2030", "5", "per mille"),
    ("5\u2103", "5", "degrees Celsius sign"),
    ("\u2160\u2163", "14", "roman numeral characters"),
    ("\u00b2", "2", "a superscript two alone is a power of nothing"),
]
TEXT_MODE = [
    ("1\\text{-}5", "-4", "a hyphen in text is a dash: the range 1 to 5 (was 1)"),
    ("\\text{2 - 3}", "-1", "a dash in prose (was 1)"),
    ("\\text{10-2}", "8", "a range in text (was 1)"),
    ("1\\text{--}5", "-4", "an en dash: a range (was 1)"),
    ("5\\text{ MW}", "5\\text{ mW}", "mega, not milli: case is kept beside a number (was 1)"),
    ("5\\text{ MS}", "5\\text{ ms}", "siemens, not milliseconds (was 1)"),
    ("5\\text{ Cal}", "5\\text{ cal}", "a food Calorie is a kilocalorie (was 1)"),
    ("5\\text{ Mm}", "5\\text{ mm}", "megametres, not millimetres"),
    ("~~42~~", "42", "Markdown strikethrough withdraws the value (was 1)"),
    ("~~ 42 ~~", "42", "struck through with spaces (was 1)"),
    ("~~42", "42", "an opened strikethrough (was 1)"),
    ("42\\text{ (approximately)}", "42", "a qualifier"),
    ("\\text{about } 42", "42", "about"),
    ("42 \\text{ if } n>1", "42", "a condition"),
    ("42 \\text{ pairs}", "42", "pairs double the count"),
    ("42 \\text{ lakh}", "42", "a scale word the grader does not know"),
    ("42\\text{k}", "42", "k is a thousand"),
    ("42 \\text{ mod } 5", "42", "a residue"),
    ("42 \\pmod{5}", "42", "a residue class"),
    ("\\text{not (A)}", "(A)", "a negated choice"),
    ("\\textbf{not } 42", "42", "negated in bold"),
    ("\\emph{not} 42", "42", "negated in emphasis"),
    ("\\text{yes}", "\\text{no}", "the other word"),
]
READINGS = [
    ("1/2x", "\\frac{x}{2}", "1/2x is 1/(2x) to many readers (was 1)"),
    ("1/2\\pi", "\\frac{\\pi}{2}", "is pi in the denominator? (was 1)"),
    ("3/4x", "\\frac{3x}{4}", "(was 1)"),
    ("6 \\div 2(3)", "9", "the famous ambiguity (was 1)"),
    ("6/2(3)", "9", "(was 1)"),
    ("1/2\\sqrt{3}", "\\frac{\\sqrt3}{2}", "(was 1)"),
    ("1/x y", "\\frac{y}{x}", "(was 1)"),
    ("2 \\frac{3}{2}", "3", "a mixed number 3 1/2, or the product 3? (was 1)"),
    ("2\\frac{4}{2}", "4", "(was 1)"),
    ("2\\dfrac{5}{4}", "\\frac{5}{2}", "(was 1)"),
    ("2\\frac{1}{2}x", "x", "2 1/2 x is 5x/2 to most readers (was 1)"),
    ("\\sin^{-1} x", "\\csc x", "sin^-1 is arcsin, not the cosecant (was 1)"),
    ("\\sin^{-1} x", "\\frac{1}{\\sin x}", "(was 1)"),
    ("\\cos^{-1}(x)", "\\sec(x)", "(was 1)"),
    ("\\tan^{-1} 1", "\\cot 1", "(was 1)"),
    ("\\sin^{-2} x", "\\csc^2 x", "a negative power of a function is not guessed (was 1)"),
    ("\\log_{10} 2", "\\log 2", "log without a base may be ln (was 1)"),
    ("\\lg 8", "3", "lg is log base 2 in computing"),
    ("(5,1)", "\\emptyset", "a pair, not an empty interval (was 1)"),
    ("[3,2]", "\\emptyset", "no way to write the empty set (was 1)"),
    ("(2,2)", "\\varnothing", "a pair (was 1)"),
    ("(3,2]", "\\emptyset", "(was 1)"),
    ("y=1, x=2", "(1,2)", "the names say x = 2 (was 1)"),
    ("b=3, a=4", "(3,4)", "the names say a = 4 (was 1)"),
    ("y = 1 \\text{ and } x = 2", "(1,2)", "(was 1)"),
    ("z=1, y=2, x=3", "(1,2,3)", "(was 1)"),
    ("101_{2}", "101", "base two: five"),
    ("0.\\overline{3}", "0.3", "a repeating decimal"),
    ("41.\\overline{9}", "41", "41.999... is 42"),
    ("4.2\\times10^{1}", "4.2\\times10^{-1}", "the exponent's sign"),
    ("10^23", "1023", "10 squared, then 3"),
    ("2{}3", "23", "an empty group between digits"),
    ("2\\mbox{}3", "23", "an empty box between digits"),
    ("\\sqrt[3]{8}", "\\sqrt{8}", "a cube root"),
    ("5!!", "120", "a double factorial is 15"),
    ("5'", "5", "a prime"),
    ("42^+", "42", "a one-sided limit"),
    ("0x2A", "42", "hexadecimal is not read"),
    ("1'234", "1234", "an apostrophe is no digit group here"),
    ("1.234", "1234", "a decimal point, never a German group"),
    ("1,5", "1.5", "a list, never a decimal comma"),
    ("x \\nless 5", "x < 5", "not less than"),
    ("x \\propto 5", "5", "proportional to"),
    ("x \\overset{?}{=} 5", "5", "a questioned equality"),
    ("x = 5 \\lor x = 6", "5", "two solutions"),
    ("\\{\\}", "0", "the empty set is not zero"),
    ("\\infty", "-\\infty", "the other infinity"),
    ("5\\text{ km}", "5\\text{ m}", "a thousand times more"),
    ("5\\text{ m}^2", "5\\text{ m}", "an area against a length"),
    ("5^\\circ\\text{C}", "5^\\circ", "a temperature against an angle"),
    ("5\\text{ AUD}", "\\$5", "Australian dollars"),
    ("\\$5\\text{/hr}", "\\$5", "a rate, not an amount"),
    ("5\\text{ light years}", "5\\text{ years}", "a length, not a time"),
    ("\\pm 5", "5", "two values"),
]
# (reply, gold, why it is wrong): the final answer is extracted first, as the engine does.
REPLIES = [
    ("The answer is $\\cancel{\\boxed{42}}$.", "42", "the only box is cancelled (was 1)"),
    ("The answer is $\\sout{\\boxed{42}}$.", "42", "struck through (was 1)"),
    ("The answer is \\st{$\\boxed{42}$}.", "42", "struck through (was 1)"),
    ("$\\xcancel{\\boxed{42}}$", "42", "(was 1)"),
    ("$\\underbrace{\\boxed{42}}_{\\text{wrong}}$", "42", "labelled wrong (was 1)"),
    ("$\\text{\\boxed{42} is wrong}$", "42", "denied in the same text (was 1)"),
    ("$\\frac{1}{\\boxed{42}}$", "42", "the box is a denominator (was 1)"),
    ("$\\sqrt{\\boxed{42}}$", "42", "under a root (was 1)"),
    ("$10^{\\boxed{3}}$", "3", "an exponent (was 1)"),
    ("$-\\boxed{42}$", "42", "minus 42 (was 1)"),
    ("$4\\boxed{2}$", "2", "the reader sees 42 (was 1)"),
    ("$\\boxed{4}2$", "4", "the reader sees 42 (was 1)"),
    ("$\\boxed{4}.2$", "4", "the reader sees 4.2 (was 1)"),
    ("$\\boxed{4}^2$", "4", "sixteen (was 1)"),
    ("$\\boxed{5}!$", "5", "120 (was 1)"),
    ("$\\boxed{5}\\%$", "\\$5", "a percentage, not money (was 1)"),
    ("$\\boxed{42}?$", "42", "a question, not an answer"),
    ("$x \\neq \\boxed{42}$", "42", "a negated relation (was 1)"),
    ("$x < \\boxed{42}$", "42", "an inequality (was 1)"),
    ("$x \\approx \\boxed{42}$", "42", "an approximation (was 1)"),
    ("$\\not= \\boxed{42}$", "42", "(was 1)"),
    ("$\\pm\\boxed{42}$", "42", "two values (was 1)"),
    ("\\framebox{41} \\boxed{42}", "42", "a framed box is a box: a hedge (was 1)"),
    ("\\boxed{41} \\framebox[2cm]{42}", "41", "a hedge"),
    ("$\\bbox[border:1px]{41}$ $\\boxed{42}$", "42", "MathJax's box: a hedge (was 1)"),
    ("$\\boxed 4 \\boxed{2}$", "2", "a box without braces boxes one token: a hedge (was 1)"),
    ("$\\boxed{42}\\text{ is wrong}$", "42", "denied after the box (was 1)"),
    ("$\\boxed{42} \\text{ (incorrect)}$", "42", "(was 1)"),
    ("$\\boxed{~~42~~}$", "42", "struck through inside the box (was 1)"),
    ("$\\boxed{41}$ \\textcolor{white}{$\\boxed{42}$}", "42", "white text is not seen"),
    ("$\\boxed{41}$ <span style=\"display:none\">$\\boxed{42}$</span>", "42", "hidden HTML"),
    ("$\\boxed{41}$ <s>$\\boxed{42}$</s>", "42", "a second, struck box: a hedge"),
    ("\\fbox{41} \\boxed{42}", "42", "an fbox is a box: a hedge"),
]
# Meaning-preserving forms the new rules must still read.
PRESERVING = [
    ("x=1, y=2", "(1,2)", "names in order"),
    ("[2,2]", "\\{2\\}", "a degenerate closed interval is its point"),
    ("(-\\infty, 3)", "x < 3", "an interval to infinity"),
    ("2\\log 2", "\\log 4", "true whatever the base"),
    ("\\log_2 8", "3", "a written base"),
    ("\\sin^{-1}\\left(\\frac{1}{2}\\right)", "\\frac{\\pi}{6}", "arcsin"),
    ("2\\frac{1}{2}", "\\frac{5}{2}", "a mixed number"),
    ("\\frac{x}{2}", "x/2", "a slash with nothing after it"),
    ("٤٢", "42", "Arabic-Indic digits"),
    ("\uff14\uff12", "42", "full-width digits"),
    ("\\text{Yes}", "yes", "case in prose"),
]
PRESERVING_REPLIES = [
    ("The answer is $\\boxed{42}$.", "42", "a sentence's full stop"),
    ("$x = \\boxed{5}$", "5", "a name before the box"),
    ("$3 + 2 = \\boxed{5}$", "5", "a computation before the box"),
    ("$\\boxed{42}\\text{ cm}$", "42", "a unit after the box"),
    ("**Final answer:** $\\boxed{42}$", "42", "Markdown bold before the box"),
    ("$\\boxed{-\\frac{1}{2}}$, so we are done.", "-\\frac12", "a comma after the box"),
]


def _grade(answer: str, gold: str) -> float:
    return grade_answer(answer, gold, "math").score


def _reply_grade(reply: str, gold: str) -> float:
    return grade_answer(extract_final_answer(reply), gold, "math").score


@pytest.mark.parametrize(("answer", "gold", "why"), LOOKALIKES, ids=[row[0] for row in LOOKALIKES])
def test_lookalike_characters_are_read_as_what_they_are_or_not_at_all(answer: str, gold: str, why: str) -> None:
    """Labels, raised letters and other compatibility characters never become plain digits or factors."""
    assert _grade(answer, gold) == 0.0, why
    assert _reply_grade(f"So $\\boxed{{{answer}}}$.", gold) == 0.0, why


@pytest.mark.parametrize(("answer", "gold", "why"), TEXT_MODE, ids=[row[0] for row in TEXT_MODE])
def test_words_hyphens_case_and_strikethrough_in_text_are_never_dropped(answer: str, gold: str, why: str) -> None:
    """A hyphen in text is a dash, case beside a number is a unit prefix, ``~~`` strikes through."""
    assert _grade(answer, gold) == 0.0, why
    assert _reply_grade(f"So $\\boxed{{{answer}}}$.", gold) == 0.0, why


@pytest.mark.parametrize(("answer", "gold", "why"), READINGS, ids=[row[0] for row in READINGS])
def test_a_form_with_two_readings_or_another_meaning_scores_zero(answer: str, gold: str, why: str) -> None:
    """``1/2x``, ``2\\frac{3}{2}``, ``\\sin^{-1}``, ``\\log``, reversed intervals and names out of order."""
    assert _grade(answer, gold) == 0.0, why


@pytest.mark.parametrize(("reply", "gold", "why"), REPLIES, ids=[row[0][:40] for row in REPLIES])
def test_what_is_written_against_a_box_is_part_of_the_answer(reply: str, gold: str, why: str) -> None:
    """A box inside a command, after a sign or relation, before a power or words, or beside another box."""
    assert _reply_grade(reply, gold) == 0.0, why


@pytest.mark.parametrize(("answer", "gold", "why"), PRESERVING, ids=[row[0] for row in PRESERVING])
def test_the_new_rules_still_read_equivalent_forms(answer: str, gold: str, why: str) -> None:
    """The rules above refuse guesses, not notation: these equivalent forms still score 1."""
    assert _grade(answer, gold) == 1.0, why


@pytest.mark.parametrize(("reply", "gold", "why"), PRESERVING_REPLIES, ids=[row[0][:40] for row in PRESERVING_REPLIES])
def test_ordinary_text_around_a_box_is_not_taken_into_the_answer(reply: str, gold: str, why: str) -> None:
    """Full stops, commas, a name before ``=``, a unit and Markdown bold leave the boxed answer as it is."""
    assert _reply_grade(reply, gold) == 1.0, why
