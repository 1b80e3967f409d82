"""How an answer reads in a line of text: quoted as the model gave it, or ``no answer``.

A Python ``None`` printed as an answer reads like a model that answered "None".
"""

from __future__ import annotations


def shown_answer(answer: str | None) -> str:
    """``'18'`` for an answer, ``no answer`` when there was none."""
    return "no answer" if answer is None else repr(answer)
