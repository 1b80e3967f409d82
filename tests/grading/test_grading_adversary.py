"""The grading adversary itself (engine/testing/grading_adversary): its mutants mean what their kind says.

A changing operator that produced a mutant equal to its gold would fail a correct grader;
these tests hold the operators to the honesty the fuzz test relies on.
"""

from __future__ import annotations

import json
import random
import re
from fractions import Fraction
from pathlib import Path

import pytest

from engine.testing.grading_adversary import (
    CHANGING,
    OPERATORS,
    PRESERVING,
    grade_mutant,
    load_golds,
    operators,
    sample_mutants,
)
from engine.testing.grading_adversary.shapes import core
from engine.testing.grading_adversary.values import Unreadable, evaluate, same_value

GOLDS = load_golds()
SEEDS = range(60)
BELOW_FLOAT = {"tiny_term_added", "rational_approximation"}
"""A nonzero term of 10^-20, a fraction near an irrational: wrong by construction, and closer
to an irrational gold than the evaluator's floating point can tell."""
TWO_READINGS = {"slash_before_product", "integer_before_improper_fraction", "braced_factors_drawn_as_digits",
                "indeterminate_power"}
"""``1/2x``, ``2\\frac{6}{2}``, ``{3}{4}`` and ``0^0``: forms read two ways (a product or what a
reader sees, 34; Python's convention 0**0 == 1 or an indeterminate form), one of them the gold;
the evaluator takes that one, the grader must take neither."""


def _all(name: str, gold: str) -> set[str]:
    """Every mutant the operator makes of ``gold`` over many seeds."""
    return {m for seed in SEEDS if (m := OPERATORS[name](gold, random.Random(seed))) is not None}


@pytest.mark.parametrize("operator", operators(), ids=lambda op: op.name)
def test_no_mutant_contradicts_its_kind_by_the_adversarys_own_evaluator(operator) -> None:
    """Changing mutants never evaluate equal to the gold; preserving ones never clearly differ.

    ``f(0)`` is left out: the evaluator reads a letter before a parenthesis as a product; so are
    words after a gold of 0 (read as letters times 0).
    """
    if operator.target == "reply":
        pytest.skip("a reply is not a value")
    if operator.name in BELOW_FLOAT:
        pytest.skip("its change is below floating point; it is wrong by construction")
    if operator.name in TWO_READINGS:
        pytest.skip("a form with two readings: the evaluator takes the gold's, the grader neither")
    contradictions = []
    for mutant in sample_mutants(operator, GOLDS, 40, seed=7):
        if re.search(r"[a-zA-Z]\s*(\(|\\left\()", mutant.text):
            continue
        if re.search(r"[a-zA-Z]{2}", mutant.text) and same_value(core(mutant.gold.text), "0"):
            continue  # the evaluator reads words as a product of letters, and 0 times anything is 0
        verdict = same_value(core(mutant.gold.text), mutant.text)
        if verdict is (operator.kind != CHANGING):
            continue
        if verdict is not None:
            contradictions.append((mutant.gold.text, mutant.text))
    assert not contradictions


def test_a_digit_edit_that_keeps_the_value_is_not_a_mutant() -> None:
    """Digit edits that leave the gold's value unchanged are not offered as mutants."""
    assert all(Fraction(m) != Fraction("0.5") for m in _all("digit_deleted", "0.50"))
    assert "0.50" not in _all("digit_changed", "0.50")


def test_a_decimal_gold_is_not_mutated_within_its_stated_precision() -> None:
    """``4.491`` may be exactly what ``4.49`` approximates, so it is no mutant of it."""
    for name in ("digit_inserted", "digit_changed", "digit_deleted", "least_digit_nudged"):
        for mutant in _all(name, "4.49"):
            assert abs(Fraction(mutant) - Fraction("4.49")) > Fraction(5, 1000), (name, mutant)
    assert not _all("tiny_term_added", "0.33")
    assert all(re.search(r"[5-8]\}$", m) for m in _all("repeating_bar_added", "0.25"))
    assert not _all("repeating_bar_added", "0.23")


def test_values_that_are_their_own_power_or_factorial_are_skipped() -> None:
    """Golds that equal their own power, factorial or binomial get no such mutants."""
    for gold in ("0", "1"):
        assert not _all("power_word_appended", gold)
        assert not _all("whole_powered", gold)
    assert not _all("factorial_word_appended", "2")
    assert not _all("factorial_symbol", "1")
    assert "3!!" not in _all("factorial_symbol", "3")
    assert all("{3}" not in m for m in _all("binomial_taken", "4"))  # C(4, 3) = 4


def test_layout_is_never_put_before_a_group_of_three_digits() -> None:
    """``1\\,000`` is a thousands separator, not two numbers."""
    for name in ("wide_space_between_digits", "narrow_space_between_digits", "phantom_between_digits",
                 "subscript_digit"):
        for mutant in _all(name, "1000"):
            assert not re.fullmatch(r"1\D.*000", mutant), (name, mutant)


def test_infinite_golds_get_no_tiny_term() -> None:
    """Infinite golds get no tiny-term mutant, since adding one keeps the value."""
    assert not _all("tiny_term_added", "\\infty")
    assert not _all("tiny_term_added", "-\\infty")


def test_an_interval_end_another_part_covers_is_not_flipped() -> None:
    """In ``(0, 9] \\cup (9, 36)`` flipping either 9 leaves the union as it was."""
    mutants = _all("interval_bracket_swapped", "(0, 9] \\cup (9, 36)")
    assert mutants
    assert all("9) \\cup" not in m and "[9" not in m for m in mutants)


def test_a_gold_with_a_latex_comment_is_never_mutated() -> None:
    """Whatever follows ``%`` is unseen, so a denial appended to ``28 %`` would change nothing."""
    for operator in operators():
        assert operator("28 %", random.Random(0)) is None, operator.name


def test_reply_mutants_are_graded_on_their_extracted_final_answer() -> None:
    """Reply mutants are graded on the final answer extracted from the reply."""
    block = OPERATORS["answer_block"]
    assert grade_mutant(block, "Thinking.\n<answer>\\boxed{42}</answer>", "42").score == 1.0
    assert grade_mutant(block, "no box at all", "42").detail == "no answer"


def test_sampling_is_reproducible_and_never_repeats_a_mutant() -> None:
    """Mutant sampling is reproducible for a seed and never repeats a mutant."""
    for operator in (OPERATORS["digit_changed"], OPERATORS["percent_for_money"]):
        first = sample_mutants(operator, GOLDS, 50, seed=3)
        assert [m.text for m in first] == [m.text for m in sample_mutants(operator, GOLDS, 50, seed=3)]
        assert len({(m.gold.text, m.text) for m in first}) == len(first)


def test_every_operator_has_a_kind_and_the_kinds_are_the_two_of_the_issue() -> None:
    """Every operator is either meaning-changing or meaning-preserving, and both kinds occur."""
    assert {op.kind for op in operators()} == {CHANGING, PRESERVING}


def test_golds_are_read_the_way_each_benchmark_publishes_its_answer(tmp_path: Path) -> None:
    """Golds are read from each benchmark's own answer format and from the labelled cases."""
    data, cases = tmp_path / "data", tmp_path / "cases"
    data.mkdir()
    cases.mkdir()
    (data / "amc23.jsonl").write_text(json.dumps({"answer": 27.0}) + "\n" + json.dumps({"answer": 2.5}) + "\n")
    (data / "gsm8k.jsonl").write_text(json.dumps({"answer": "so 1,234 in all\n#### 1,234"}) + "\n")
    (data / "minerva_math.jsonl").write_text(json.dumps({"solution": "a $\\boxed{1}$ then $\\boxed{\\frac{1}{2}}$"}))
    (cases / "x.jsonl").write_text("\n".join(json.dumps(row) for row in (
        {"answer": "0.5", "gold": "\\frac12", "label": 1},
        {"answer": "7", "gold": "27", "label": 0},
    )))
    golds = {gold.text: gold.source for gold in load_golds(data, cases)}
    assert golds == {"27": "amc23", "2.5": "amc23", "1234": "gsm8k", "\\frac{1}{2}": "minerva_math",
                     "\\frac12": "cases/x", "0.5": "cases/x"}


def test_the_evaluator_is_exact_on_rationals_and_refuses_what_it_cannot_read() -> None:
    """The evaluator compares rationals exactly, declines ambiguous forms and refuses what it cannot read."""
    assert same_value("2000001", "2000000") is False
    assert same_value("10^{30} + 1", "10^{30}") is False
    assert same_value("0.5", "\\frac12") is True
    assert same_value("x + y", "y + x") is True
    assert same_value("\\sqrt{4}", "2") is True
    assert same_value("137 \\frac{1}{2}", "137.5") is None  # a mixed number or a product: not called
    with pytest.raises(Unreadable):
        evaluate("5\\text{ cm}")
