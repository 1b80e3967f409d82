"""Which part of a reply is its final answer.

Only the final answer counts. Reasoning (``<think>``) and tool traffic (code,
retrieval queries, tool responses) are masked first, because a ``\\boxed{}`` that a
model writes while thinking, or prints from code, is not an answer. Then:

1. the last complete ``<answer>...</answer>`` block is taken (the text between the
   last ``</answer>`` and the nearest ``<answer>`` before it); inside it the last
   brace-matched ``\\boxed{...}`` (or ``\\fbox{...}``) wins, else the whole body;
2. without an answer block, the last brace-matched ``\\boxed{...}`` left outside
   think, tool blocks and fenced code is taken (plain chain-of-thought replies);
3. otherwise there is no answer (``None``). Empty answers are ``None`` too.

A ``<think>`` or tool block left open runs to the end of the text, and a closing
``</think>`` without an opening tag (chat templates often open it for the model)
masks everything before it.

What a reader never sees is not an answer: LaTeX comments (``%`` to the end of the
line, except a percent sign after a number), ``\\iffalse...\\fi``, ``\\phantom{...}``,
white text (``\\textcolor{white}{...}``, ``{\\color{white} ...}``), HTML comments and hidden
HTML elements are masked before any box is looked for. When the final region
holds several boxes, all of them are returned (``\\boxed{41} \\boxed{42}``) so the
grader can refuse a hedge: two different final answers score 0.
"""

from __future__ import annotations

import re
from typing import Final

_MASKED_TAGS: Final = (
    "think",
    "python_code",
    "local_rag",
    "rag_search",
    "web_search",
    "informalmath_verify",
    "tool_response",
)
_MASKED_BLOCK = re.compile(
    r"<(" + "|".join(_MASKED_TAGS) + r")>.*?(?:</\1>|\Z)", re.IGNORECASE | re.DOTALL
)
_CODE_FENCE = re.compile(r"```.*?(?:```|\Z)", re.DOTALL)
_ANSWER_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_ANSWER_CLOSE = re.compile(r"</answer>", re.IGNORECASE)
_BOX_START = re.compile(r"\\(?:boxed|fbox)\s*\{")
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_IFFALSE = re.compile(r"\\iffalse(?![A-Za-z]).*?(?:\\fi(?![A-Za-z])|\Z)", re.DOTALL)
_LATEX_COMMENT = re.compile(r"(?<![\\\d])(?<!\d )%[^\n]*")
_PHANTOM = re.compile(r"\\(?:[hv]?phantom|textcolor\s*\{\s*white\s*\})\s*\{")
_WHITE_GROUP = re.compile(r"\{\s*\\color\s*\{\s*white\s*\}")
_HIDDEN_HTML = re.compile(
    r"<(\w+)[^>]*(?:\bhidden\b|display\s*:\s*none|visibility\s*:\s*hidden)[^>]*>.*?(?:</\1\s*>|\Z)",
    re.IGNORECASE | re.DOTALL,
)


def extract_final_answer(text: str) -> str | None:
    """The final answer of ``text`` by the rules in the module docstring, stripped."""
    visible = mask_hidden(mask_reasoning_and_tools(text))
    body = _last_answer_body(visible)
    region = body if body is not None else _CODE_FENCE.sub("\n", visible)
    boxes = top_level_boxes(region)
    if len({" ".join(box.split()) for box in boxes}) > 1:
        return " ".join(f"\\boxed{{{box.strip()}}}" for box in boxes)
    if body is not None:
        answer = last_boxed(body)
        return _non_empty(body if answer is None else answer)
    return _non_empty(last_boxed(region))


def mask_hidden(text: str) -> str:
    """``text`` without what a reader never sees: HTML and LaTeX comments, ``\\iffalse`` blocks and
    ``\\phantom`` arguments."""
    text = _IFFALSE.sub(" ", _HIDDEN_HTML.sub(" ", _HTML_COMMENT.sub(" ", text)))
    text = _LATEX_COMMENT.sub(" ", text)
    text = _WHITE_GROUP.sub(r"\\phantom{", text)  # {\color{white} x}: the rest of the group is unseen
    if "phantom" not in text and "textcolor" not in text:
        return text
    closing = _brace_pairs(text)
    kept: list[str] = []
    position = 0
    for match in _PHANTOM.finditer(text):
        if match.start() < position:
            continue
        end = closing.get(match.end() - 1, len(text) - 1)
        kept.append(text[position : match.start()])
        position = end + 1
    kept.append(text[position:])
    return " ".join(kept)


def top_level_boxes(text: str) -> list[str]:
    """Contents of every balanced ``\\boxed{...}`` not inside another box, in order."""
    closing = _brace_pairs(text)
    boxes: list[str] = []
    covered_until = -1
    for match in _BOX_START.finditer(text):
        start = match.end() - 1
        end = closing.get(start)
        if end is None or start < covered_until:
            continue
        boxes.append(text[start + 1 : end])
        covered_until = end
    return boxes


def _last_answer_body(text: str) -> str | None:
    """Body between the last ``</answer>`` and the nearest ``<answer>`` before it."""
    closes = [m.start() for m in _ANSWER_CLOSE.finditer(text)]
    if not closes:
        return None
    opens = [m.end() for m in _ANSWER_OPEN.finditer(text, 0, closes[-1])]
    return text[opens[-1] : closes[-1]] if opens else None


def mask_reasoning_and_tools(text: str) -> str:
    """``text`` with think blocks and tool blocks replaced by line breaks."""
    head, sep, tail = text.partition("</think>")
    if sep and "<think>" not in head.lower():
        text = tail
    return _MASKED_BLOCK.sub("\n", text)


def last_boxed(text: str) -> str | None:
    """Content of the last ``\\boxed{...}`` whose braces balance; ``None`` if none does.

    Escaped braces (``\\{``, ``\\}``) are content, not structure, so sets such as
    ``\\boxed{\\{1, 2\\}}`` come out whole; content may span lines.
    """
    starts = [m.end() - 1 for m in _BOX_START.finditer(text)]
    if not starts:
        return None
    closing = _brace_pairs(text)
    for start in reversed(starts):
        end = closing.get(start)
        if end is not None:
            return text[start + 1 : end]
    return None


def _brace_pairs(text: str) -> dict[int, int]:
    """Map each balanced ``{`` to its ``}`` in one pass (linear even for hostile input)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    i = 0
    while i < len(text):
        char = text[i]
        if char == "\\":
            i += 2
            continue
        if char == "{":
            stack.append(i)
        elif char == "}" and stack:
            pairs[stack.pop()] = i
        i += 1
    return pairs


def _non_empty(answer: str | None) -> str | None:
    if answer is None:
        return None
    answer = answer.strip()
    return answer or None
