"""Default grading: mathematical equivalence decided by the ``math-verify`` library.

``math-verify`` bounds its parsing and comparison with ``signal.alarm``, which only
works in the main thread of a process; call this from a worker process's main
thread (``engine.grading.pool.ProcessPoolGrader`` does), never from a thread pool.
"""

from __future__ import annotations

from typing import Any, Final

from handlers.ports import Grade

METHOD: Final = "math_verify"
_DETAIL_CHARS: Final = 200


def grade_with_math_verify(answer: str, ground_truth: str, *, timeout_seconds: int = 5) -> Grade:
    """Score ``answer`` against ``ground_truth`` by mathematical equivalence.

    Both sides are read as inline LaTeX (``$...$``), falling back to the raw text, so
    plain numbers, LaTeX and simple expressions all parse. When either side yields
    nothing parseable the two are compared as normalised strings instead.
    """
    import math_verify  # heavy (sympy, antlr): imported on first use only

    gold = _parse(math_verify, ground_truth, timeout_seconds)
    pred = _parse(math_verify, answer, timeout_seconds)
    if not gold or not pred:
        same = _plain(answer) == _plain(ground_truth) and bool(_plain(answer))
        return Grade(score=float(same), method=METHOD, detail="compared as text: unparseable")
    correct = math_verify.verify(gold, pred, timeout_seconds=timeout_seconds)
    detail = f"answer={_show(pred)} ground_truth={_show(gold)}"
    return Grade(score=float(correct), method=METHOD, detail=detail)


def _parse(library: Any, text: str, timeout_seconds: int) -> list[Any]:
    configs = [library.LatexExtractionConfig(), library.ExprExtractionConfig()]
    for candidate in (f"${text}$", text):
        parsed = library.parse(
            candidate, extraction_config=configs, parsing_timeout=timeout_seconds
        )
        if parsed:
            return list(parsed)
    return []


def _plain(text: str) -> str:
    return "".join(text.split()).strip("$").lower()


def _show(parsed: list[Any]) -> str:
    if not parsed:
        return "?"
    try:
        return str(parsed[0])[:_DETAIL_CHARS]
    except ValueError:  # an integer past Python's 4300-digit printing limit
        return "(a number too long to print)"
