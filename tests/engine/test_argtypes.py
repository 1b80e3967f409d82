"""Numeric command-line options: garbage and out-of-range values get argparse's clear error."""

from __future__ import annotations

import argparse

import pytest

from engine.console.argtypes import number, whole_number


@pytest.mark.parametrize(("text", "expected"), [("0", 0), ("7", 7), (" 12 ", 12)])
def test_whole_numbers_in_range_are_accepted(text: str, expected: int) -> None:
    """Whole numbers at or above the minimum are accepted as ints."""
    assert whole_number(0)(text) == expected


@pytest.mark.parametrize(
    ("convert", "text", "message"),
    [
        (whole_number(1), "zero", "expected a whole number, got 'zero'"),
        (whole_number(1), "2.5", "expected a whole number, got '2.5'"),
        (whole_number(1), "", "expected a whole number, got ''"),
        (whole_number(1), "0", "must be 1 or more, not 0"),
        (whole_number(0), "-3", "must be 0 or more, not -3"),
        (whole_number(1, 50), "51", "must be between 1 and 50, not 51"),
        (whole_number(1, 50), "0", "must be between 1 and 50, not 0"),
    ],
)
def test_bad_whole_numbers_are_refused_with_the_reason(convert, text: str, message: str) -> None:
    """Malformed or out-of-range whole numbers are refused with the reason."""
    with pytest.raises(argparse.ArgumentTypeError, match=message.replace("(", r"\(")):
        convert(text)


def test_numbers_take_decimals_down_to_their_minimum() -> None:
    """Numbers accept decimals down to and including their minimum."""
    assert number(0)("2.5") == 2.5
    assert number(0)("0") == 0.0


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fast", "expected a number, got 'fast'"),
        ("nan", "expected a finite number, got 'nan'"),
        ("inf", "expected a finite number, got 'inf'"),
        ("-0.5", "must be 0 or more, not -0.5"),
    ],
)
def test_bad_numbers_are_refused_with_the_reason(text: str, message: str) -> None:
    """Malformed or out-of-range numbers are refused with the reason."""
    with pytest.raises(argparse.ArgumentTypeError, match=message):
        number(0)(text)


def test_a_parser_turns_the_refusal_into_a_usage_error_naming_the_option(capsys: pytest.CaptureFixture[str]) -> None:
    """argparse turns a refused value into a usage error (exit 2) that names the option."""
    parser = argparse.ArgumentParser(prog="tool")
    parser.add_argument("--limit", type=whole_number(1))
    with pytest.raises(SystemExit) as exited:
        parser.parse_args(["--limit", "-2"])
    assert exited.value.code == 2
    assert "argument --limit: must be 1 or more, not -2" in capsys.readouterr().err
