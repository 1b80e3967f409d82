"""Source preparation: repairs only when needed, user line numbers kept."""

from __future__ import annotations

import ast

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.sandbox.source import fix_fstring_newlines, fix_indentation, prepare


def test_valid_code_is_never_rewritten() -> None:
    """Code that parses runs as written (only the trailing print is added)."""
    code = "s = 'of' + \"f'\"\nprint(s)\n"
    prepared = prepare(code)
    assert prepared.repairs == ()
    assert prepared.source == code


def test_fstring_repair_maps_lines_back() -> None:
    """After escaping newlines, later lines map to the user's numbering."""
    fixed, line_map = fix_fstring_newlines('a = 1\nb = f"x\ny\nz"\nc = 2\n')
    assert fixed == 'a = 1\nb = f"x\\ny\\nz"\nc = 2\n'
    assert line_map[:3] == [1, 2, 5]


def test_indentation_repair_follows_the_reference_rule() -> None:
    """Lines deeper than a previous line without ':' are dedented; blocks are kept."""
    code = "  x = 1\n    y = 2\nif x:\n    z = 3"
    assert fix_indentation(code)[0] == "x = 1\ny = 2\nif x:\n    z = 3"


def test_unrepairable_code_reports_the_original_error() -> None:
    """When no repair helps, the user's own syntax error (and line) is reported."""
    prepared = prepare("x = 1\ndef f(:\n    pass\n")
    assert prepared.tree is None
    assert prepared.error is not None and prepared.error.lineno == 2


def test_trailing_print_call_is_not_wrapped() -> None:
    """A final print(...) is left alone (no duplicate output)."""
    prepared = prepare("print(1)")
    assert prepared.tree is not None and len(prepared.tree.body) == 1


@pytest.mark.parametrize(
    ("code", "line"), [("*0", 1), ("x = 1\nreturn x", 2), ("break", 1), ("nonlocal y", 1), ("await x", 1)]
)
def test_code_only_the_compiler_refuses_is_reported_as_a_syntax_error(code: str, line: int) -> None:
    """ast.parse accepts these; they must still come back as the user's syntax error."""
    prepared = prepare(code)
    assert prepared.tree is None
    assert isinstance(prepared.error, SyntaxError) and prepared.error.lineno == line


@given(st.text(max_size=200))
def test_prepare_never_raises(code: str) -> None:
    """Any text gives either a module or a syntax error, never an exception."""
    prepared = prepare(code)
    assert (prepared.tree is None) == (prepared.error is not None)
    if prepared.tree is not None:
        compile(prepared.tree, "<string>", "exec")
        assert isinstance(prepared.tree, ast.Module)
