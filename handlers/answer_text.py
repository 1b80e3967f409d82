"""How an answer reads in a line of text: ``answer '18'``, or ``no answer`` when there was none.

A Python ``None`` printed as an answer reads like a model that answered "None".
"""

from __future__ import annotations


def answer_phrase(answer: str | None) -> str:
    """``answer '18'`` for an answer (quoted as given: LaTeX keeps its single backslashes),
    ``no answer`` when there was none."""
    return "no answer" if answer is None else f"answer '{answer.translate(_LINE_BREAKS)}'"


_LINE_BREAKS = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})
"""Breaks shown as escapes, so the phrase stays on one line; nothing else is escaped."""
