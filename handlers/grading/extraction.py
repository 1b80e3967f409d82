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


def extract_final_answer(text: str) -> str | None:
    """The final answer of ``text`` by the rules in the module docstring, stripped."""
    visible = mask_reasoning_and_tools(text)
    body = _last_answer_body(visible)
    if body is not None:
        answer = last_boxed(body)
        return _non_empty(body if answer is None else answer)
    return _non_empty(last_boxed(_CODE_FENCE.sub("\n", visible)))


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
