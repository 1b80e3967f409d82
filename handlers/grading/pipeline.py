"""apollo's math grader: prepare, tokenize, parse, compare; sound by construction.

1. **Prepare** (:mod:`handlers.grading.tokens`): a closed table of rewrites into
   equivalent notation (Unicode math, delimiters, a whole ``\\boxed{}``, digit grouping).
2. **Tokenize and parse** (:mod:`handlers.grading.tokens`, :mod:`handlers.grading.parser`):
   every token is read from the closed vocabularies of :mod:`handlers.grading.lexicon`,
   or the answer is unreadable. Units, currencies, percent, degrees, constants and
   relations are part of the reading; layout is never arithmetic.
3. **Compare** (:mod:`handlers.grading.compare`): kind by kind, exactly.

An unreadable side is compared as canonical text and scores 1 only when the texts are
identical. Anything refused, undecided or timed out scores 0, and the grade's
``detail`` says what each side was read as, every word, unit or constant read or
converted, and how the two compared.
"""

from __future__ import annotations

import re
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import fields, is_dataclass
from typing import Any, Final

from handlers.errors import HandlerError
from handlers.grading.compare import Comparer, Verdict
from handlers.grading.extraction import top_level_box_spans
from handlers.grading.guards import TooCostly, check_raw, check_text, check_tree
from handlers.grading.lexicon import ROMAN, TEXT_COMMANDS
from handlers.grading.parser import parse
from handlers.grading.readings import Assignment, Refused, Text
from handlers.grading.tokens import Prepared, Unreadable, prepare, size_marks_dropped, tokenize
from handlers.ports import Grade

METHOD: Final = "math"
PARSE_TIMEOUT_S: Final = 2
"""Longest one side may take to read; with the comparison's bound a grade stays under the
grading pool's 10 s deadline."""
_WRAPPED: Final = re.compile(r"\\(" + "|".join(sorted(TEXT_COMMANDS | ROMAN)) + r")\s*\{(?P<body>[^{}]*)\}")
_CHOICE: Final = re.compile(r"\(([A-Za-z])\)")
_SPACE_BESIDE_SYMBOL: Final = re.compile(r"\s*([^\w\s])\s*")
_LAYOUT_ONLY: Final = re.compile(r"(?:\s|~|\$|\\[,;:! ]|\\q?quad(?![A-Za-z]))*")
"""Spaces and spacing commands: what may stand between boxes an answer is made of."""
_PROSE: Final = re.compile(r"[A-Za-z][A-Za-z ,.;:'!?]*")
"""Text that is only words: its case may be folded (``Yes`` = ``yes``). Anything with a command, a
bracket, a power or a relation is mathematics, where case names another thing (``\\dot{X} = aX``)."""


class GradingTimeout(HandlerError):  # a verdict: undecided within the bound
    """Reading or comparing took longer than its bound."""


def grade_math(answer: str, ground_truth: str, *, timeout_seconds: int = 5,
               numeric_tolerance: float | None = None) -> Grade:
    """Score ``answer`` against ``ground_truth`` (see the module docstring). Never raises."""
    try:
        return _grade(answer, ground_truth, timeout_seconds, numeric_tolerance)
    except Exception as exc:  # noqa: BLE001 - a grade with the reason beats a crashed worker
        detail = f"not graded: the grader failed on this input ({type(exc).__name__})"
        return Grade(score=0.0, method=METHOD, detail=detail)


def _grade(answer: str, ground_truth: str, timeout_seconds: int, tolerance: float | None) -> Grade:
    comparer = Comparer(tolerance)
    gold, gold_notes = read_side(ground_truth, comparer)
    pred, pred_notes = read_side(answer, comparer)
    if isinstance(gold, Refused):
        verdict = Verdict(False, f"not graded: the ground truth is {gold.why}")
    elif isinstance(pred, Refused):
        verdict = Verdict(False, f"not equal: the answer is {pred.why}")
    elif isinstance(pred, Text) or isinstance(gold, Text):
        verdict = _as_text(pred, gold, answer, ground_truth)
    else:
        try:
            with _bounded(timeout_seconds):
                verdict = comparer.readings(pred, gold)
        except GradingTimeout:
            verdict = Verdict(False, f"not equal: undecided within {timeout_seconds} s")
    detail = (f"answer read as {pred.describe()}{_notes(pred_notes)}; "
              f"ground truth read as {gold.describe()}{_notes(gold_notes)}; {verdict.how}")
    return Grade(score=1.0 if verdict.equal else 0.0, method=METHOD, detail=detail)


def read_side(text: str, comparer: Comparer) -> tuple[Any, tuple[str, ...]]:
    """What one side reads as, and the notes on what was read or rewritten."""
    problem = check_raw(text) if text.strip() else "empty"
    if problem:
        return Refused(problem), ()
    boxes = _only_boxes(text)
    if len(boxes) > 1:
        return _hedge(boxes, comparer)
    prepared = prepare(text)
    problem = check_text(prepared.text) or (None if prepared.text else "empty")
    if problem:
        return Refused(problem), ()
    try:
        with _bounded(PARSE_TIMEOUT_S):
            reading, notes = parse(tokenize(prepared.text))
            _check_values(reading)
            reading = _settled(reading, comparer)
    except Unreadable as exc:
        return Text(canonical_text(prepared), f"unreadable: {exc}"), prepared.rewrites
    except TooCostly as exc:
        return Refused(str(exc)), ()
    except GradingTimeout:
        return Refused(f"too slow to read (over {PARSE_TIMEOUT_S} s)"), ()
    return reading, prepared.rewrites + notes + _constants(reading)


def _only_boxes(text: str) -> list[str]:
    """The contents of the boxes ``text`` is made of (``\\boxed{41} \\boxed{42}``, as a reply's several
    final answers are handed over), or none when anything else is written beside them: in
    ``-\\boxed{42}, -\\boxed{42}`` or ``\\boxed{42} \\neq \\boxed{42}`` the boxes alone are not what a
    reader reads, so the whole is read (and a box inside it is unreadable)."""
    spans = top_level_box_spans(text)
    outside = text
    for start, _, _, end in reversed(spans):
        outside = outside[:start] + " " + outside[end:]
    return [text[first:last] for _, first, last, _ in spans] if _LAYOUT_ONLY.fullmatch(outside) else []


def _hedge(boxes: list[str], comparer: Comparer) -> tuple[Any, tuple[str, ...]]:
    """Several boxed final answers: fine when all are equal, a hedge (refused) otherwise."""
    readings = [read_side(box, comparer)[0] for box in boxes]
    last = readings[-1]
    for reading, box in zip(readings[:-1], boxes[:-1], strict=True):
        same = box.strip() == boxes[-1].strip()
        if not same and not isinstance(reading, Refused | Text) and not isinstance(last, Refused | Text):
            with _bounded(PARSE_TIMEOUT_S):
                same = bool(comparer.readings(reading, last))
        if not same:
            shown = "; ".join(box.strip()[:40] for box in boxes)
            return Refused(f"a hedge: {len(boxes)} different final answers ({shown})"), ()
    return last, (f"{len(boxes)} boxed answers, all equal",)


def _settled(reading: Any, comparer: Comparer) -> Any:
    """``z = 1 + 1 = 2`` is 2 when every member of the chain is equal; a chain that does not hold
    (``x = 5 + 5 + 1 = 7 = 11``) is refused."""
    if isinstance(reading, Assignment) and reading.chain:
        for member in reading.chain:
            if not comparer.readings(member, reading.value):
                msg = "an equality chain that does not hold"
                raise TooCostly(msg)
    return reading


def _values_in(reading: Any) -> Iterator[Any]:
    """Every value held anywhere inside a reading (its fields, items, parts)."""
    stack = [reading]
    while stack:
        item = stack.pop()
        if is_dataclass(item):
            stack.extend(getattr(item, field.name) for field in fields(item))
        elif isinstance(item, tuple | list):
            stack.extend(item)
        elif hasattr(item, "free_symbols") or hasattr(item, "args"):
            yield item


def _check_values(reading: Any) -> None:
    """The guards' bounds on every sympy value inside a reading, before anything evaluates it."""
    for value in _values_in(reading):
        check_tree(value)


def _constants(reading: Any) -> tuple[str, ...]:
    import sympy

    found: list[str] = []
    for value in _values_in(reading):
        if isinstance(value, sympy.Basic):
            if value.has(sympy.E):
                found.append("e read as Euler's number")
            if value.has(sympy.I):
                found.append("i read as the imaginary unit")
    return tuple(dict.fromkeys(found))


def canonical_text(prepared: Prepared) -> str:
    """The text an unreadable answer is compared by: one wrapping font command removed, ``\\dfrac`` and
    ``\\tfrac`` written ``\\frac`` and delimiter sizes (``\\left(``) dropped, since both only set the size;
    spaces kept only between two letters or digits, a choice letter without its parentheses."""
    text = prepared.text.strip()
    whole = _WRAPPED.fullmatch(text)
    if whole:
        text = whole.group("body").strip()
    text = size_marks_dropped(text)
    text = _SPACE_BESIDE_SYMBOL.sub(r"\1", " ".join(text.split()))
    choice = _CHOICE.fullmatch(text)
    return choice.group(1) if choice else text


def _as_text(pred: Any, gold: Any, answer: str, ground_truth: str) -> Verdict:
    pred_text = pred.text if isinstance(pred, Text) else canonical_text(prepare(answer))
    gold_text = gold.text if isinstance(gold, Text) else canonical_text(prepare(ground_truth))
    if isinstance(pred, Text) and isinstance(gold, Text) and _PROSE.fullmatch(pred_text) and _PROSE.fullmatch(
            gold_text):
        # Case is folded only in prose (Yes = yes); next to a number it is a unit's prefix (MW, mW), and in
        # a formula it tells two variables apart (x' and X').
        same = pred_text.casefold() == gold_text.casefold()
    else:
        same = pred_text == gold_text
    if same and pred_text:
        return Verdict(True, "equal: identical text")
    return Verdict(False, "not equal: compared as text")


def _notes(notes: tuple[str, ...]) -> str:
    return f" [{'; '.join(notes)}]" if notes else ""


@contextmanager
def _bounded(seconds: float) -> Iterator[None]:
    """Raise :class:`GradingTimeout` after ``seconds`` (``signal`` timers: main thread only; other
    threads rely on the guards' bounds alone)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise GradingTimeout

    previous: Callable[..., Any] | int | None = signal.signal(signal.SIGALRM, expire)
    remaining = signal.setitimer(signal.ITIMER_REAL, seconds)[0]
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous or signal.SIG_DFL)
        if remaining:
            signal.setitimer(signal.ITIMER_REAL, remaining)
