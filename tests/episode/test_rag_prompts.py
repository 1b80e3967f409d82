"""Prompt builders for the optional rewrite and summary model calls."""

from __future__ import annotations

from handlers.episode.rag_prompts import clean_rewrite, clean_summary, rewrite_messages, summary_messages


def test_rewrite_messages_carry_query_and_library() -> None:
    """The rewrite request is a system + user pair naming the library and query."""
    messages = rewrite_messages("how do I get eigenvalues?", "sympy")
    assert [m.role for m in messages] == ["system", "user"]
    assert "sympy" in messages[1].content
    assert "how do I get eigenvalues?" in messages[1].content


def test_summary_messages_carry_query_and_hits() -> None:
    """The summary request includes the question and the rendered hits."""
    messages = summary_messages("gcd?", "[1] math.gcd ...")
    assert [m.role for m in messages] == ["system", "user"]
    assert "gcd?" in messages[1].content
    assert "[1] math.gcd" in messages[1].content


def test_clean_rewrite_keeps_first_line_without_think_or_quotes() -> None:
    """Think blocks, quotes and extra lines are dropped from a rewrite reply."""
    assert clean_rewrite('<think>hmm</think>\n"matrix eigenvalues"\nmore') == "matrix eigenvalues"
    assert clean_rewrite("  \n") == ""


def test_clean_summary_drops_reasoning_and_treats_unclosed_think_as_nothing() -> None:
    """Only the text after the reasoning is a summary; a cut-off think block yields nothing."""
    assert clean_summary("<think>look</think>\n  use math.comb(n, k)  ") == "use math.comb(n, k)"
    assert clean_summary("<think>still thinking when the tokens ran out") == ""
    assert clean_summary("plain note") == "plain note"
