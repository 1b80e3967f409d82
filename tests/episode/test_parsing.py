"""Action projection: golden rows of the reference table plus protocol errors."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from handlers.episode.parsing import DEFAULT_TOOL_TAGS, ParsedAction, parse_action

GOLDEN_TRAINING = [
    (
        "text<python_code>print(1+1)</python_code> text <tool_response>2</tool_response>",
        "<python_code>print(1+1)</python_code>",
        True,
    ),
    ("<python_code>print('hello')</python_code><answer>2</answer>", "<answer>2</answer>", False),
    (
        "<web_search>p</web_search>text<python_code>x</python_code>",
        "<web_search>p</web_search>",
        False,
    ),
    (
        "Some text<informalmath_>8</informalmath_>Some text<answer>0</answer>Some text",
        "<answer>0</answer>",
        True,
    ),
    ("", "", False),
    ("hello", "", False),
    ("<answer>1</answer><answer>2</answer>", "<answer>1</answer>", False),
    (
        "<python_code>a</python_code><python_code>b</python_code>",
        "<python_code>a</python_code>",
        False,
    ),
    ("<python_code>x", "", False),
    ('<think>hmm</think><local_rag>{"a":1}</local_rag>', '<local_rag>{"a":1}</local_rag>', True),
    ("<ANSWER>x</ANSWER>", "<answer>x</answer>", True),
]


@pytest.mark.parametrize(("raw", "action", "valid"), GOLDEN_TRAINING)
def test_training_projection_matches_reference_table(raw: str, action: str, valid: bool) -> None:
    """Every row of the reference projection table projects and validates the same way."""
    parsed = parse_action(raw)
    assert (parsed.action, parsed.valid) == (action, valid)


@pytest.mark.parametrize(("raw", "action", "valid"), GOLDEN_TRAINING)
def test_report_flag_does_not_change_rows_without_reports(
    raw: str, action: str, valid: bool
) -> None:
    """Rows without a report project identically with reports accepted."""
    parsed = parse_action(raw, accept_report=True)
    assert (parsed.action, parsed.valid) == (action, valid)


def test_evolving_report_wins_over_answer_and_stays_valid() -> None:
    """A report followed by an answer projects to the report and is valid."""
    parsed = parse_action(r"<report>\boxed{1}</report><answer>2</answer>", accept_report=True)
    assert parsed == ParsedAction(
        kind="report", action=r"<report>\boxed{1}</report>", valid=True, answer=r"\boxed{1}"
    )


def test_report_is_plain_text_without_the_flag() -> None:
    """Without the report flag, a report tag is ignored and the answer is taken."""
    parsed = parse_action(r"<report>\boxed{1}</report><answer>2</answer>")
    assert (parsed.kind, parsed.action, parsed.valid) == ("answer", "<answer>2</answer>", True)


def test_report_without_flag_alone_is_empty() -> None:
    """Without the report flag a lone report is no action."""
    assert parse_action("<report>ok \\boxed{1}</report>").kind == "empty"


def test_tool_fields_hold_name_and_stripped_body() -> None:
    """A tool action exposes the tool name and the stripped tag body."""
    parsed = parse_action("<think>x</think>\n<python_code>\nprint(2)\n</python_code>")
    assert parsed.kind == "tool"
    assert parsed.tool == "python_code"
    assert parsed.tool_input == "print(2)"
    assert parsed.answer is None
    assert parsed.error is None


def test_answer_fields_hold_stripped_body() -> None:
    """An answer action exposes its stripped body and no tool."""
    parsed = parse_action("<answer>  \\boxed{7}\n</answer>")
    assert (parsed.kind, parsed.answer, parsed.tool, parsed.action) == (
        "answer",
        "\\boxed{7}",
        None,
        "<answer>\\boxed{7}</answer>",
    )


def test_tool_and_answer_error_names_both() -> None:
    """A reply with a tool call and an answer is told to use one action per turn."""
    parsed = parse_action("<python_code>1</python_code><answer>2</answer>")
    assert parsed.error == (
        "Your reply contained both a tool call and an answer; use exactly one action per turn."
    )


def test_tool_and_report_is_invalid_with_report_flag() -> None:
    """A verifier reply with a tool call and a report is invalid and keeps the report."""
    parsed = parse_action("<python_code>1</python_code><report>r</report>", accept_report=True)
    assert (parsed.kind, parsed.valid) == ("report", False)
    assert parsed.error is not None and "a report" in parsed.error


def test_repeated_reports_are_invalid() -> None:
    """Two report blocks make the reply invalid; the first is kept."""
    parsed = parse_action("<report>a</report><report>b</report>", accept_report=True)
    assert (parsed.action, parsed.valid) == ("<report>a</report>", False)


def test_answer_and_report_without_tool_are_valid() -> None:
    """An answer and a report together, without tools, remain valid (report first)."""
    parsed = parse_action("<answer>2</answer><report>r</report>", accept_report=True)
    assert (parsed.kind, parsed.valid) == ("report", True)


def test_counts_are_case_insensitive() -> None:
    """Open tags in any case count towards the repetition rule."""
    parsed = parse_action("<answer>1</answer><ANSWER>2</ANSWER>")
    assert (parsed.action, parsed.valid) == ("<answer>1</answer>", False)


def test_uppercase_closing_tag_is_not_a_truncation_point() -> None:
    """Truncation is case-sensitive, extraction is not, as in the reference."""
    parsed = parse_action("<PYTHON_CODE>a</PYTHON_CODE> then <answer>3</answer>")
    assert (parsed.action, parsed.valid) == ("<answer>3</answer>", False)


def test_tool_priority_follows_the_tool_list_order() -> None:
    """After truncation the first tool in list order with a complete block wins."""
    text = "<local_rag>q</local_rag><python_code>c</python_code>"
    assert parse_action(text).tool == "local_rag"
    assert parse_action("<Local_Rag>q</local_rag>").action == "<local_rag>q</local_rag>"


def test_unknown_tools_are_plain_text() -> None:
    """Tags outside the configured tool list are not actions."""
    parsed = parse_action("<python_code>1</python_code>", tools=("local_rag",))
    assert parsed.kind == "empty"
    assert parsed.error is not None and "no action" in parsed.error


def test_extra_tools_can_be_added() -> None:
    """A caller-supplied tool tag is recognised."""
    parsed = parse_action("<lean4>theorem</lean4>", tools=(*DEFAULT_TOOL_TAGS, "lean4"))
    assert (parsed.tool, parsed.tool_input, parsed.valid) == ("lean4", "theorem", True)


def test_unclosed_block_error_names_the_tag() -> None:
    """An action left open is reported by name."""
    error = parse_action("<think>a</think><python_code>print(1)").error
    assert error is not None and "<python_code>" in error and "never closed" in error


def test_empty_reply_error_mentions_the_final_action() -> None:
    """An empty reply is told what an action looks like."""
    assert "<answer>...</answer>" in (parse_action("").error or "")
    assert "<report>...</report>" in (parse_action("", accept_report=True).error or "")


def test_repeated_tool_error_counts_calls() -> None:
    """Several tool calls are counted in the message."""
    error = parse_action("<python_code>a</python_code><local_rag>b</local_rag>").error
    assert error is not None and "2 tool calls" in error


@pytest.mark.parametrize("bad", ["", "a b", "answer", "REPORT", "x>y", "1abc"])
def test_unusable_tool_tags_are_rejected(bad: str) -> None:
    """Tool tags that are not plain names, or collide with action tags, raise ValueError."""
    with pytest.raises(ValueError, match="tool tag"):
        parse_action("x", tools=(bad,))


@pytest.mark.parametrize(
    "garbage",
    [
        "<" * 1000,
        "</answer>",
        "<answer>",
        "</python_code><python_code>",
        "\x00\ufffd<answer>\u200b</answer>",
        "<answer></answer>",
        "<python_code>" * 50 + "</python_code>",
        "x" * 200_000,
    ],
)
def test_garbage_replies_never_raise(garbage: str) -> None:
    """Odd replies still produce a consistent ParsedAction."""
    parsed = parse_action(garbage, accept_report=True)
    assert parsed.valid == (parsed.error is None)
    assert (parsed.kind == "empty") == (parsed.action == "")


def test_empty_answer_body_is_still_an_answer() -> None:
    """An empty answer block is an (empty) answer, not a missing action."""
    parsed = parse_action("<answer> </answer>")
    assert (parsed.kind, parsed.answer, parsed.valid) == ("answer", "", True)


_PIECES = st.sampled_from(
    [
        "<",
        ">",
        "/",
        "a",
        " ",
        "<answer>",
        "</answer>",
        "<python_code>",
        "</python_code>",
        "<report>",
        "</report>",
        "<ANSWER>",
    ]
)


@given(st.lists(_PIECES, max_size=30).map("".join))
def test_invariants_hold_for_any_text(text: str) -> None:
    """Valid means no error; empty means no action text; actions are lowercase-tagged."""
    parsed = parse_action(text, accept_report=True)
    assert parsed.valid == (parsed.error is None)
    assert (parsed.kind == "empty") == (parsed.action == "")
    if parsed.kind != "empty":
        assert parsed.action.startswith(f"<{parsed.tool or parsed.kind}>")
