"""Reference-compatible grading: the published numbers' answer extraction and equality.

Reproduces the behaviour of the reference's training-time grader (a Qwen2.5-Math
style checker) so scores stay comparable with published results, quirks included:

* extraction takes the last *single-line, greedy* ``\\boxed{...}`` match, so two
  boxes on one line yield ``3} and \\boxed{4``; then a GSM8K ``#### n``; then a loose
  "the (final) (answer) (is)" phrase; then simply the last line;
* equality tries, in order: the ``\\pm`` rule, exact match after normalisation, float
  closeness (relative 1e-4), *unordered* tuple match, and ``sympy.simplify`` on both
  sides without LaTeX parsing (so ``\\frac{1}{2}`` never equals ``0.5``).

The evolving variant (grader B, ``reference_evolve``) differs in one place: right
after the boxed search it takes the last ``<answer>...</answer>`` block, before the
GSM8K pattern.

Deliberate differences: strings that could execute code when handed to sympy (names
outside a small math vocabulary, underscores, quotes, attribute access) or that are
very long skip the symbolic step and compare unequal, and the reference's 10 s
alarm is left to the caller (the grading process pool has a per-call timeout).
"""

from __future__ import annotations

import math
import re
from typing import Final

_GREEDY_BOX: Final = re.compile(r"\\boxed\{(.*)\}")
_GREEDY_FBOX: Final = re.compile(r"\\fbox\{(.*)\}")
_GSM8K: Final = re.compile(r"####\s*(-?[0-9.,]+)")
_SAYS_ANSWER: Final = re.compile(r"[Tt]he(?:\s+final)?(?:\s+answer)?(?:\s+is)?:?\s*([^\n]+)")
_PLUS_MINUS: Final = re.compile(r"(.+?)\s*\\pm\s*(.+)", re.DOTALL)
_LIST_SEPARATOR: Final = re.compile(r"[,;]")
_UNIT_PATTERNS: Final = (
    re.compile(r"\s*degrees", re.IGNORECASE),
    re.compile(r"\s*inches\^2", re.IGNORECASE),
    re.compile(r"\s*square inches", re.IGNORECASE),
)
_SQRT_SHORTHAND: Final = re.compile(r"\\sqrt(\w+)")
_ANSWER_OPEN: Final = "<answer>"
_ANSWER_CLOSE: Final = "</answer>"
_EXTRACTED: Final = "extracted="

_SYMPY_SAFE_CHARS: Final = re.compile(r"[0-9A-Za-z+\-*/^().,! \t]*")
_IDENTIFIER: Final = re.compile(r"[A-Za-z]+")
_ATTRIBUTE_ACCESS: Final = re.compile(r"[A-Za-z)]\s*\.")
_SYMPY_NAMES: Final = frozenset(
    [
        "sqrt",
        "cbrt",
        "root",
        "pi",
        "exp",
        "log",
        "ln",
        "sin",
        "cos",
        "tan",
        "cot",
        "sec",
        "csc",
        "asin",
        "acos",
        "atan",
        "acot",
        "sinh",
        "cosh",
        "tanh",
        "Abs",
        "factorial",
        "binomial",
        "floor",
        "ceiling",
        "gcd",
        "lcm",
        "oo",
        "zoo",
        "Rational",
        "Integer",
        "Float",
        "Max",
        "Min",
        "sign",
        "re",
        "im",
        "gamma",
    ]
)
_SYMPY_MAX_CHARS: Final = 500


def reference_score(solution_text: str, ground_truth: object) -> float:
    """1.0 when the reference grader accepts the reply text, else 0.0."""
    try:
        return float(
            reference_math_equal(reference_extract_answer(solution_text), str(ground_truth))
        )
    except Exception:  # noqa: BLE001 - the reference scores any grader failure as wrong
        return 0.0


def reference_evolve_score(solution_text: str, ground_truth: object) -> float:
    """1.0 when the reference's evolving grader (B) accepts the reply text, else 0.0."""
    try:
        extracted = reference_extract_answer(solution_text, answer_tags=True)
        return float(reference_math_equal(extracted, str(ground_truth)))
    except Exception:  # noqa: BLE001 - the reference scores any grader failure as wrong
        return 0.0


def reference_extract_answer(text: str | None, *, answer_tags: bool = False) -> str:
    """The answer the reference grader would read from ``text`` (see module docstring).

    ``answer_tags``: the evolving variant (B), which tries the last ``<answer>`` block
    right after the boxed search.
    """
    if text is None:
        return ""
    boxes = _GREEDY_BOX.findall(text) or _GREEDY_FBOX.findall(text)
    if boxes and boxes[-1]:
        return boxes[-1]
    block = last_answer_block(text) if answer_tags else None
    if block:
        return block
    numbers = _GSM8K.findall(text)
    if numbers:
        return numbers[-1].replace(",", "").replace("$", "")
    stated = _SAYS_ANSWER.findall(text)
    if stated:
        return stated[-1]
    return text.split("\n")[-1]


def last_answer_block(text: str) -> str | None:
    """Stripped body of the last ``<answer>...</answer>`` block (blocks taken left to right,
    like a non-greedy ``findall``), found in linear time; ``None`` if there is none."""
    found = None
    position = 0
    while (opened := text.find(_ANSWER_OPEN, position)) != -1:
        closed = text.find(_ANSWER_CLOSE, opened + len(_ANSWER_OPEN))
        if closed == -1:
            break
        found = text[opened + len(_ANSWER_OPEN) : closed]
        position = closed + len(_ANSWER_CLOSE)
    return None if found is None else found.strip()


def extracted_detail(extracted: str) -> str:
    """A reference grade's detail: what it read as the answer (cut to 200 characters)."""
    return f"{_EXTRACTED}{extracted[:200]}"


def extracted_answer(detail: str) -> str | None:
    """The answer a reference grade's detail says was read (``None`` for other details)."""
    return detail[len(_EXTRACTED) :] if detail.startswith(_EXTRACTED) else None


def reference_strip(text: str) -> str:
    """The reference's answer normalisation (units, LaTeX noise, fraction shorthand)."""
    text = str(text).strip()
    text = re.sub(r"\\text\{(.*?)\}", r"\1", text)
    text = re.sub(r"\\mbox\{(.*?)\}", r"\1", text)
    for noise in ("^{\\circ}", "\\circ", "°", "\\%", "%"):
        text = text.replace(noise, "")
    for unit in _UNIT_PATTERNS:
        text = unit.sub("", text)
    text = text.replace("\n", "")
    text = text.removesuffix(".")
    for old, new in (
        ("\\!", ""),
        ("\\ ", " "),
        ("\\\\", "\\"),
        ("tfrac", "frac"),
        ("dfrac", "frac"),
        ("\\left", ""),
        ("\\right", ""),
        ("$", ""),
        (" ", ""),
        ("\u200b", ""),
    ):
        text = text.replace(old, new)
    text = expand_frac_shorthand(text)
    return _SQRT_SHORTHAND.sub(r"\\sqrt{\1}", text).strip()


def expand_frac_shorthand(text: str) -> str:
    r"""``\frac12`` -> ``\frac{1}{2}`` and ``\frac1{b}`` -> ``\frac{1}{b}``.

    A ``\frac`` followed by fewer than two characters leaves the text untouched.
    """
    head, *pieces = text.split("\\frac")
    out = [head]
    for piece in pieces:
        if piece.startswith("{"):
            out.append(piece)
        elif len(piece) < 2:
            return text
        elif piece[1] == "{":
            out.append("{" + piece[0] + "}" + piece[1:])
        else:
            out.append("{" + piece[0] + "}{" + piece[1] + "}" + piece[2:])
    return "\\frac".join(out)


def reference_math_equal(prediction: object, reference: object) -> bool:
    """Whether the reference grader treats ``prediction`` and ``reference`` as equal."""
    if prediction is None or reference is None:
        return False
    pred, ref = str(prediction), str(reference)
    if ("\\pm" in ref and _plus_minus_matches(ref, pred)) or (
        "\\pm" in pred and _plus_minus_matches(pred, ref)
    ):
        return True
    pred, ref = reference_strip(pred), reference_strip(ref)
    if pred == ref:
        return True
    pred_number, ref_number = _as_number(pred), _as_number(ref)
    if (
        pred_number is not None
        and ref_number is not None
        and math.isclose(pred_number, ref_number, rel_tol=1e-4)
    ):
        return True
    return _same_parts_any_order(pred, ref) or _sympy_equal(pred, ref)


def _plus_minus_matches(with_pm: str, listed: str) -> bool:
    """``A \\pm B`` against a two-item list ``A+B, A-B`` in any order."""
    match = _PLUS_MINUS.match(with_pm.strip())
    parts = _LIST_SEPARATOR.split(listed)
    if match is None or len(parts) != 2:
        return False
    a, b = match.group(1).strip(), match.group(2).strip()
    return {reference_strip(f"{a}+{b}"), reference_strip(f"{a}-{b}")} == {
        reference_strip(parts[0]),
        reference_strip(parts[1]),
    }


def _as_number(text: str) -> float | None:
    try:
        return float(reference_strip(text).replace(",", ""))
    except ValueError:
        return None


def _same_parts_any_order(pred: str, ref: str) -> bool:
    """Tuple-like answers compared as sorted lists of their items."""
    pred_parts = _list_items(pred)
    ref_parts = _list_items(ref)
    return len(pred_parts) > 1 and sorted(pred_parts) == sorted(ref_parts)


def _list_items(text: str) -> list[str]:
    items = _LIST_SEPARATOR.split(text.strip("()[]{}"))
    return [item.strip() for item in items if item.strip()]


def _sympy_equal(pred: str, ref: str) -> bool:
    """``simplify(pred) == simplify(ref)`` on plain expressions; anything else is unequal."""
    if not (_sympy_safe(pred) and _sympy_safe(ref)):
        return False
    import sympy  # heavy: imported only when a symbolic comparison is needed

    try:
        return bool(sympy.simplify(sympy.sympify(pred)) == sympy.simplify(sympy.sympify(ref)))
    except Exception:  # noqa: BLE001 - sympy raises many types on unparsable input; unequal, as in the reference
        return False


def _sympy_safe(text: str) -> bool:
    """True when ``sympify`` can only build an expression from ``text`` (it runs ``eval``)."""
    if len(text) > _SYMPY_MAX_CHARS or not _SYMPY_SAFE_CHARS.fullmatch(text):
        return False
    if _ATTRIBUTE_ACCESS.search(text):
        return False
    return all(len(name) == 1 or name in _SYMPY_NAMES for name in _IDENTIFIER.findall(text))
