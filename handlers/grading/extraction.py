"""Which part of a reply is its final answer.

Only the final answer counts. Reasoning (``<think>``) and tool traffic (code,
retrieval queries, tool responses) are masked first, because a ``\\boxed{}`` that a
model writes while thinking, or prints from code, is not an answer. Then:

1. the last complete ``<answer>...</answer>`` block is taken (from the first ``<answer>``
   after the previous ``</answer>`` to the last ``</answer>``, so an answer opened twice
   keeps both); inside it the last brace-matched ``\\boxed{...}`` (or ``\\fbox{...}``)
   wins, else the whole body; what follows the block is read as what follows a box
   (:func:`later_sentence_taking_back`);
2. without an answer block, the last brace-matched ``\\boxed{...}`` left outside
   think and tool blocks is taken (plain chain-of-thought replies);
3. otherwise there is no answer (``None``). Empty answers are ``None`` too.

Fenced code (```` ``` ````) is masked everywhere, answer blocks included: an answer tag or a box
shown as code is not an answer. A ``<think>`` or tool block left open runs to the end of the text, and a closing
``</think>`` without an opening tag (chat templates often open it for the model)
masks everything before it.

What a reader never sees is not an answer: LaTeX comments (``%`` to the end of the
line, except a percent sign after a number), ``\\iffalse...\\fi``, ``\\phantom{...}``,
white text (``\\textcolor{white}{...}``, ``{\\color{white} ...}``), HTML comments and hidden
HTML elements are masked before any box is looked for. When the final region
holds several boxes, all of them are returned (``\\boxed{41} \\boxed{42}``) so the
grader can refuse a hedge: two different final answers score 0.

A reader does not read a box alone: what is written against it (:func:`in_context`) and the
sentence it stands in (:func:`in_sentence`) are returned with it, so ``It is not \\boxed{42}``
and ``\\boxed{42} thousand`` reach the grader whole and never read as 42.
"""

from __future__ import annotations

import re
from typing import Final

from handlers.grading.asked import (
    counts_another_thing,
    formula_names_what_is_asked,
    name_made_from_the_answer,
    names_something_else,
    names_what_is_asked,
    question_numbers,
    question_text,
    question_words,
    singular,
    subject_asked,
    subject_named_in_question,
    verb_asked,
)
from handlers.grading.spoken_arithmetic import DIGIT_GROUP_COMMA, number_in_words, plain_number, spoken_value
from handlers.grading.tokens import MATH_SEGMENT, size_marks_dropped, tilde_untied_on_left

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
_END_OF_TURN_TOKENS: Final = ("</s>", "<eos>", "<|endoftext|>", "<|im_end|>", "<|eot_id|>", "<|eom_id|>", "<|end|>",
                               "<|end_of_text|>", "<end_of_turn>", "<\uff5cend\u2581of\u2581sentence\uff5c>")
"""End-of-turn tokens some servers leave in a reply's text (DeepSeek's is written with full-width bars)."""


def _end_of_turn_dropped(text: str) -> str:
    """``text`` without the run of end-of-turn tokens at its very end: the reply's end, not words after its
    answer. Tokens anywhere else stay text (what follows one is still read)."""
    kept = text.rstrip()
    while (token := next((t for t in _END_OF_TURN_TOKENS if kept[-len(t) :].lower() == t), None)) is not None:
        kept = kept[: -len(token)].rstrip()
    return kept


_ANSWER_OPEN = re.compile(r"<answer>", re.IGNORECASE)
_ANSWER_CLOSE = re.compile(r"</answer>", re.IGNORECASE)
_BOX_START = re.compile(r"\\(?:boxed|fbox|framebox|bbox)\s*(?:\[[^\]\n]*\]\s*)*\{")
"""A box that marks a final answer: ``\\boxed``, ``\\fbox``, ``\\framebox[...]`` and MathJax's ``\\bbox[...]``."""
_ANY_BOX = re.compile(
    r"\\(?:boxed|fbox|framebox|bbox)(?![A-Za-z])\s*(?:\[[^\]\n]*\]\s*)*"
    r"(?:(?P<brace>\{)|(?P<token>\\[A-Za-z]+|[^\s{}\\]))"
)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_IFFALSE = re.compile(r"\\iffalse(?![A-Za-z]).*?(?:\\fi(?![A-Za-z])|\Z)", re.DOTALL)
_UNTYPESET_ENVIRONMENT = re.compile(
    r"\\begin\s*\{(comment|verbatim\*?|Verbatim\*?|BVerbatim|spverbatim|minted|lstlisting|hide|hidden|filecontents\*?"
    r"|alltt|codeblock)\}.*?(?:\\end\s*\{\1\}|\Z)", re.DOTALL)
"""Environments whose body is never typeset (``comment``, ``hide``) or is shown as literal code (``verbatim``,
``minted``, ``lstlisting``): a box in one is never the answer, as a box in a code fence is not."""
_LATEX_COMMENT = re.compile(r"(?<![\\\d])(?<!\d )%[^\n]*")
"""A LaTeX comment: ``%`` to the end of the line, except a percent sign after a number; one right after a closing
brace is shown too (:func:`_comment_or_shown`)."""
_AFTER_A_GROUP: Final = re.compile(r"\}(?:\s|\$|\\[)\]]|%)*\Z")


def _comment_or_shown(text: str, match: re.Match[str]) -> str:
    """A ``%`` comment masked, unless the ``%`` stands right after a closing brace (across spaces, math
    delimiters and another ``%``): ``\\boxed{42} % of the total``, ``\\(\\boxed{42}\\)%%`` are shown by
    Markdown, so the words are read with the box."""
    if _AFTER_A_GROUP.search(text, max(0, match.start() - 16), match.start()):
        return match.group()
    return " "


_PHANTOM = re.compile(r"\\(?:[hv]?phantom|textcolor\s*\{\s*white\s*\})\s*\{")
_WHITE_GROUP = re.compile(r"\{\s*\\color\s*\{\s*white\s*\}")
_HIDDEN_HTML = re.compile(
    r"<(\w+)[^<>]*(?:\bhidden\b|display\s*:\s*none|visibility\s*:\s*hidden)[^<>]*>.*?(?:</\1\s*>|\Z)",
    re.IGNORECASE | re.DOTALL,
)


_HTML_STRUCK: Final = re.compile(
    r"<(?P<tag>del|s|strike)\b[^<>]*>(?P<struck>.*?)</(?P=tag)\s*>"
    r"|<(?P<span>\w+)[^<>]*text-decoration\s*:\s*line-through[^<>]*>(?P<struck2>.*?)</(?P=span)\s*>",
    re.IGNORECASE | re.DOTALL,
)
"""HTML that strikes text through (``<del>``, ``<s>``, ``<strike>``, a ``line-through`` style): struck out, as
Markdown's ``~~`` is."""


def _struck(found: re.Match[str]) -> str:
    return f"~~{found.group('struck') if found.group('struck') is not None else found.group('struck2')}~~"


def extract_final_answer(text: str) -> str | None:
    """The final answer of ``text`` by the rules in the module docstring, stripped."""
    # A think block is reasoning, but one after the answer reopens it: it stays as a mark later sentences read.
    text = _HTML_STRUCK.sub(_struck, text)
    written = mask_reasoning_and_tools(_THINK_BLOCK.sub(_THOUGHT_LINE, _end_of_turn_dropped(text)))
    shown = mask_hidden(written)
    visible = _CODE_FENCE.sub("\n", shown)
    block = _last_answer_block(visible)
    body = block[0] if block is not None else None
    read, bare = _final_in(body if body is not None else visible, body)
    if read is None:
        return read
    taken_back = _code_after_the_answer(shown, bare) or _hidden_after_the_answer(written, bare)
    if block is not None:
        _, opened, closed = block
        # What follows the block is read as what follows a box ("</answer> Wait, it is 43."), the sentence
        # before it as the sentence before a box ("The answer is 43." over <answer>42</answer>). An earlier block
        # is an answer the last one replaces, as a later turn would.
        taken_back = (taken_back or sentence_taking_back(visible, closed, bare)
                      or _framing_sentence(visible, opened, bare) or None)
    return read if taken_back is None else _with_taken_back(read, taken_back)


_THINK_BLOCK: Final = re.compile(r"<think>.*?(?:</think>|\Z)", re.IGNORECASE | re.DOTALL)
_THOUGHT = "(thinking again)"
_THOUGHT_LINE: Final = f"\n{_THOUGHT}\n"
"""What a think block leaves in the text: nothing a box is read from, but a later sentence after the answer."""


def _code_after_the_answer(shown: str, bare: str) -> str | None:
    """Fenced code after the final box or answer block, read as later sentences (a tool's output of ``43``,
    ``# actually the answer is 43``): fences are masked while the answer is looked for, so a box shown as code
    is never the answer, but what they say after the answer is still said."""
    fences = list(_CODE_FENCE.finditer(shown))
    if not fences:
        return None
    inside = [(fence.start(), fence.end()) for fence in fences]
    marks = [end for _, _, _, end in top_level_box_spans(shown)] + [m.end() for m in _ANSWER_CLOSE.finditer(shown)]
    answered = max((mark for mark in marks if not any(a <= mark <= b for a, b in inside)), default=None)
    if answered is None:
        return None
    after = [fence.group().strip("`") for fence in fences if fence.start() >= answered]
    code = "\n".join(body.split("\n", 1)[1] if "\n" in body else body for body in after).replace("\\", " ")
    said = "\n".join(_statements_and_comments(line) for line in code.split("\n"))
    return sentence_taking_back(said, 0, bare, shown=False) if said.strip() else None


def _statements_and_comments(line: str) -> str:
    """A line of code read as sentences: its statement, then its comment, each ending on its own
    (``assert answer == 43  # OK`` states 43 whatever the comment says after it)."""
    statement, hash_mark, comment = line.partition("#")
    return f"{statement.rstrip()}.\n{comment.strip()}" if hash_mark and statement.strip() else line


def _hidden_after_the_answer(written: str, bare: str) -> str | None:
    """Comments after the final box or answer block (``<!-- wrong, it is 43 -->``, ``% actually 43``), read as
    later sentences. Hidden text is masked while the answer is looked for, so a box in a comment is never the
    answer; but a comment after the answer is the writer taking it back all the same, shown or not."""
    if "<!--" not in written and "%" not in written:
        return None
    plain = _CODE_FENCE.sub(lambda fence: " " * len(fence.group()), written)  # offsets kept
    hidden = [(m.start(), m.end(), m.group()[4:].removesuffix("-->")) for m in _HTML_COMMENT.finditer(plain)]
    hidden += [(m.start(), m.end(), m.group()[1:]) for m in _LATEX_COMMENT.finditer(plain)
               if _comment_or_shown(plain, m) == " " and not any(a <= m.start() < b for a, b, _ in hidden)]
    if not hidden:
        return None
    marks = [end for _, _, _, end in top_level_box_spans(plain)] + [m.end() for m in _ANSWER_CLOSE.finditer(plain)]
    answered = max((mark for mark in marks if not any(a < mark <= b for a, b, _ in hidden)), default=None)
    if answered is None:
        return None
    said = "\n".join(comment for start, _, comment in sorted(hidden) if start >= answered).replace("\\", " ")
    return sentence_taking_back(said, 0, bare, shown=False) if said.strip() else None


def _with_taken_back(read: str, taken_back: str) -> str:
    """The answer read with the later sentence that takes it back, as text no grader reads as a value
    (``42 (+1)`` alone would read as 42 times 1)."""
    said = taken_back.replace("{", "(").replace("}", ")").replace("\\", " ")
    return f"{read} \\text{{taken back by: {said}}}"


def _final_in(region: str, body: str | None) -> tuple[str | None, str]:
    """The final answer read in ``region`` (an answer block's ``body``, or the whole visible reply), and the value
    it gives (its last box's content, else what was read), to tell a restatement after it from another value."""
    pairs = _brace_pairs(region)
    spans = top_level_box_spans(region, pairs)
    read = _read_in(region, body, pairs, spans)
    return read, (region[spans[-1][1] : spans[-1][2]] if spans else read or "")


def _read_in(region: str, body: str | None, pairs: dict[int, int],
             spans: list[tuple[int, int, int, int]]) -> str | None:
    """The final answer read from ``region``'s boxes (``spans``), with their context and sentences."""
    if len(spans) > MAX_FINAL_BOXES:
        return TOO_MANY_BOXES
    outer = _outermost_enclosing(region, pairs, [span[0] for span in spans])
    closers = {c: o for o, c in pairs.items()}
    bounds = [context_bounds(region, span, pairs, closers, enclosing)
              for span, enclosing in zip(spans, outer, strict=True)]
    answers = [in_context(region, span, where) for span, where in zip(spans, bounds, strict=True)]
    if len(spans) > 1 and _worked_steps_then_final(region, spans):
        spans, bounds, answers = spans[-1:], bounds[-1:], answers[-1:]
    if len({" ".join(answer.split()) for answer in answers}) > 1:
        answers[-1] = _last_in_sentence(region, spans[-2][3], bounds[-1], answers[-1])
        return " ".join(f"\\boxed{{{answer.strip()}}}" for answer in answers)
    if answers:
        read = in_sentence(region, bounds[-1], answers[-1])
        taken_back = later_sentence_taking_back(region, bounds[-1][1], answers[-1])
        return _non_empty(read if taken_back is None else _with_taken_back(read, taken_back))
    return _non_empty(body)


_FINAL_ANSWER_LABEL: Final = re.compile(r"\bfinal\s+answer\b[^\n]{0,40}\s*[^\n]{0,40}\Z", re.IGNORECASE)
_STEP_RESULT: Final = re.compile(r"[\w)}\]]\s*(?:=|\\approx)\s*(?:\\left)?\Z")
_LINE_DELIMITERS: Final = re.compile(r"\$+|\\[()\[\]]|\s+")


def _worked_steps_then_final(region: str, spans: list[tuple[int, int, int, int]]) -> bool:
    """Whether every box but the last boxes a step's result (``$64+30+48 = \\boxed{142}$``) and the last is
    labelled the final answer (``**Final answer:** $\\boxed{1218}$``): a reader takes the labelled one, as a
    worked solution intends; boxes that each state an answer (``The answer is \\boxed{41}``) stay a hedge."""
    last_start = spans[-1][0]
    label = region[max(spans[-2][3], last_start - 120) : last_start]
    if not _FINAL_ANSWER_LABEL.search(_STRONG_EMPHASIS.sub("", label)):
        return False
    for start, _, _, _ in spans[:-1]:
        line = region[region.rfind("\n", 0, start) + 1 : start]
        if not _STEP_RESULT.search(_LINE_DELIMITERS.sub(" ", line).rstrip()):
            return False
    return True


def _last_in_sentence(region: str, previous_end: int, bounds: tuple[int, int], answer: str) -> str:
    """The last of several different boxes with its sentence, read from where the box before it ends:
    boxes of equal value but other text (``\\boxed{x = 42}`` ... ``it is not \\boxed{42}``) must not
    hide that the final one is denied."""
    floor = min(previous_end, bounds[0])
    return in_sentence(region[floor:], (bounds[0] - floor, bounds[1] - floor), answer)


MAX_FINAL_BOXES: Final = 64
"""More boxes than this in the final region is no answer a reader can take (and reading each in
its context would cost time that grows with their number)."""
TOO_MANY_BOXES: Final = f"\\text{{more than {MAX_FINAL_BOXES} boxed answers}}"
"""What such a reply's final answer reads as: text, equal to no gold."""
LONG_SENTENCE: Final = "\\text{a final box in a sentence longer than 2048 characters}"
"""What a box reads as when its sentence runs past :data:`CONTEXT_WINDOW` before it: unread prose."""
CONTEXT_WINDOW: Final = 2048
"""Characters read on each side of a box for its formula and its sentence. A formula or sentence
that runs further is taken into the answer up to here, which makes it unreadable (never a guess),
and the cost of reading a reply stays linear in its length."""


def _outermost_enclosing(text: str, pairs: dict[int, int], starts: list[int]) -> list[int | None]:
    """For each position in ``starts`` (ascending), the outermost balanced ``{`` open there, in one pass."""
    found: list[int | None] = []
    stack: list[int] = []
    balanced: list[int] = []  # the balanced braces of ``stack``, outermost first
    wanted = iter(starts)
    target = next(wanted, None)
    for token in _BRACE_TOKENS.finditer(text):
        while target is not None and token.start() >= target:
            found.append(balanced[0] if balanced else None)
            target = next(wanted, None)
        if target is None:
            break
        if token.group() == "{":
            stack.append(token.start())
            if token.start() in pairs:
                balanced.append(token.start())
        elif token.group() == "}" and stack and stack.pop() == (balanced[-1] if balanced else None):
            balanced.pop()
    found.extend(balanced[0] if balanced else None for _ in range(len(starts) - len(found)))
    return found


def mask_hidden(text: str) -> str:
    """``text`` without what a reader never sees: HTML and LaTeX comments, ``\\iffalse`` blocks, environments
    that are never typeset or only shown as code, and ``\\phantom`` arguments."""
    text = _IFFALSE.sub(" ", _HIDDEN_HTML.sub(" ", _HTML_COMMENT.sub(" ", _UNTYPESET_ENVIRONMENT.sub(" ", text))))
    text = _LATEX_COMMENT.sub(lambda match: _comment_or_shown(text, match), text)
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
    return [text[first:last] for _, first, last, _ in top_level_box_spans(text)]


def top_level_box_spans(text: str, pairs: dict[int, int] | None = None) -> list[tuple[int, int, int, int]]:
    """Each box not inside another box, in order: where it starts, where its content starts and
    ends, and where it ends. ``\\boxed 4`` (no braces) boxes one token, as LaTeX does."""
    closing = _brace_pairs(text) if pairs is None else pairs
    spans: list[tuple[int, int, int, int]] = []
    covered_until = -1
    for match in _ANY_BOX.finditer(text):
        if match.start() < covered_until:
            continue
        if match.group("brace"):
            opening = match.end() - 1
            end = closing.get(opening)
            if end is None:
                continue
            spans.append((match.start(), opening + 1, end, end + 1))
            covered_until = end + 1
        else:
            spans.append((match.start(), match.start("token"), match.end(), match.end()))
            covered_until = match.end()
    return spans


def _last_answer_block(text: str) -> tuple[str, int, int] | None:
    """Body of the last answer block, and where the block starts and ends. The body runs from the first
    ``<answer>`` after the ``</answer>`` before the last one, to the last ``</answer>``. An ``<answer>``
    opened again inside it stays in the body (``<answer>41<answer>42</answer>`` gives two answers, not
    the second alone)."""
    closes = list(_ANSWER_CLOSE.finditer(text))
    if not closes:
        return None
    floor = closes[-2].end() if len(closes) > 1 else 0
    first_open = _ANSWER_OPEN.search(text, floor, closes[-1].start())
    if first_open is None:
        return None
    return text[first_open.end() : closes[-1].start()], first_open.start(), closes[-1].end()


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


_BRACE_TOKENS: Final = re.compile(r"\\.|[{}]", re.DOTALL)
"""A brace, or an escaped character (``\\{`` is content, not structure), found by the regex engine."""


def _brace_pairs(text: str) -> dict[int, int]:
    """Map each balanced ``{`` to its ``}`` in one pass (linear even for hostile input)."""
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for token in _BRACE_TOKENS.finditer(text):
        if token.group() == "{":
            stack.append(token.start())
        elif token.group() == "}" and stack:
            pairs[stack.pop()] = token.start()
    return pairs


def _non_empty(answer: str | None) -> str | None:
    if answer is None:
        return None
    answer = answer.strip()
    return answer or None


# -- what is written against a box is part of what a reader reads --------------------------------

_LEFT_BOUNDARY_COMMANDS: Final = frozenset({
    "quad", "qquad", "Rightarrow", "Longrightarrow", "rightarrow", "longrightarrow", "implies", "iff",
    "therefore", "because", "to", "hence", "thus", "colon",
})
"""Commands that end what comes before a box (``x \\implies \\boxed{5}``): the box starts afresh."""
_SPACING: Final = re.compile(r"(?:\s|~|\\[,;:! ]|\\q?quad(?![A-Za-z]))+")
_RIGHT_BOUNDARY_COMMANDS: Final = frozenset({"]", ")", "end", "\\", "newline", "hline", "quad", "qquad", "label",
                                            "boxed", "fbox", "framebox", "bbox"})
_GLUED_LEFT: Final = frozenset("^_/.!'|")
"""Marks that join a box to what is before it only when nothing separates them (``10^\\boxed{3}``)."""
_SPACED_LEFT: Final = frozenset("-+<>\u2212")
"""Signs and relations that apply to a box even across a space (``x \\neq \\boxed{5}``, ``- \\boxed{5}``)."""
_GLUED_RIGHT: Final = frozenset("^_!'%(/?…")
_SPACED_RIGHT: Final = frozenset("+-<>/*\u2212")
_DIGITS_OR_DOT: Final = frozenset("0123456789.")
"""After a box and a full stop: ``\\boxed{4}.2`` is 4.2 and ``\\boxed{4}...`` an ellipsis."""


# -- the sentence a final box stands in --------------------------------------------------------

_SENTENCE_END: Final = re.compile(
    r"\n|(?<!\bi\.e)(?<!\be\.g)(?<!\bapprox)(?<!\bappr)(?<!\bapx)(?<!\babt)(?<!\bca)(?<!\best)(?<!\bmax)(?<!\bmin)"
    r"(?<!\bavg)(?<!\bprob)(?<!\bposs)(?<!\bvs)(?<!\bs\.f)(?<!\bsig)(?<!\bfigs)[.!?](?=(?:\*\*|__)?(?:\s|$))"
    r"(?<!\w!(?=\s*(?:[=+<>]|-|\\(?:cdot|times|le|ge|ne|approx|equiv)\b)))|</answer>"
    r"|[\u3002\uff01\uff1f\u0964]",
    re.IGNORECASE,
)
"""Where a sentence ends. The full stop of an abbreviation that hedges or bounds (``approx.``, ``ca.``, ``est.``,
``max.``, ``vs.``, ``2 s.f.``) does not: the abbreviation is read with the box after it; nor does a factorial
followed by a relation or an operator (``$k! = \\boxed{42}$``)."""
_STRONG_EMPHASIS: Final = re.compile(r"\*\*|__")
"""Markdown's bold markers, which close around a final sentence (``**The total is $\\boxed{42}$.**``) and say
nothing about its value."""
_MATH_DELIMITERS: Final = re.compile(r"\$+|\\[()\[\]]")
_CLOSING_PHRASE: Final = re.compile(
    r"(?:(?:which|this|that|it)\s+)?(?:is|are|was|would\s+be|will\s+be|as)\s+(?:the|my|our)\s+"
    r"(?:(?:final|correct|required|requested|desired|sought)\s+)?(?:answer|result|solution|value)s?"
    # Japanese, Korean and Hindi put the copula after the answer: desu, to narimasu, de aru; imnida, ida
    r"|\u3067\u3059|\u3068\u306a\u308a\u307e\u3059|\u3068\u306a\u308b|\u3067\u3042\u308b"
    r"|\uc785\ub2c8\ub2e4|\uc774\ub2e4"
    # Hindi: hai, hoga
    r"|\u0939\u0948|\u0939\u094b\u0917\u093e",
    re.IGNORECASE,
)
"""Words after a final box that only announce it (``\\boxed{42} is the final answer``): a closed list."""
_RESTATING: Final = re.compile(
    r"[\s(\u2014\u2013,;:-]*(?:(?:that\s+is|i\.\s?e\.|namely|or|in\s+words|written\s+out|read\s+as|spelled\s+out)"
    r"[\s,:]*)?(?P<words>[A-Za-z][A-Za-z\s-]*?)[\s).!]*",
    re.IGNORECASE,
)


def _restated_in_words(after: str, answer: str) -> bool:
    """Whether the rest of the box's sentence only says the box's number in words (``(forty-two)``, ``\u2014 that is,
    one over three``)."""
    said = _RESTATING.fullmatch(after)
    if said is None:
        return False
    value, boxed = number_in_words(said.group("words")), plain_number(answer)
    return value is not None and value == boxed


def _says_another_number_in_words(later: str, answer: str) -> bool:
    """Whether the clause after the box's comma names it again as another number in words (``\\boxed{42}, or
    forty-three``, ``\\boxed{42}, namely forty-three``): a reader meets two values."""
    said = _RESTATING.fullmatch(later)
    value = number_in_words(said.group("words")) if said is not None else None
    return value is not None and value != plain_number(answer)


_DASH_TAIL: Final = re.compile(r"\A\s*(?:\u2014|\u2013|--?)\s*(?P<tail>.+)", re.DOTALL)


def _unconfirmed_dash_tail(later: str) -> bool:
    """Whether the rest of the box's sentence is set off by a dash and says something of the box that is not
    evidence for it (``\\boxed{42} \u2014 courtesy of a dartboard``), by the rule for remarks after the box
    (:func:`_unconfirmed_remark`). A dash before a value is read by the value rules."""
    tail = _DASH_TAIL.match(later)
    if tail is None or re.search(r"(?<![\w-])\d[\d.,]*(?![\w-])|\$|\\[(\[]", tail.group("tail")):
        return False
    return _unconfirmed_remark(_prose_only(tail.group("tail")))


_EXACTLY: Final = re.compile(
    r"[\s(\u2014\u2013-]*(?:exactly|exact|precisely)(?:\s*[,;]?\s*(?:with\s+)?no\s+rounding(?:\s+(?:is\s+|was\s+)?"
    r"(?:needed|required|necessary|involved|used))?)?[\s).]*",
    re.IGNORECASE,
)
"""A box said to be exact, and nothing else (``\u2014 exactly, with no rounding needed``)."""
_NAMED_AFTER_THE_BOX: Final = re.compile(
    r"[\s(\u2014\u2013-]*(?:and\s+)?(?:(?:which|this|that|it)\s+)?(?:is|was|represents|gives|as)\s+"
    r"(?P<subject>(?:the|our|my)\s+[A-Za-z' -]+?|what\s+(?:the\s+(?:problem|question)|we|you)\s+"
    r"(?:asks?\s+for|asked\s+for|wants?|wanted|(?:is|was|were)\s+asked(?:\s+for)?))[\s.!)]*",
    re.IGNORECASE,
)
_NAMING_WORDS: Final = frozenset({
    "the", "our", "my", "final", "correct", "required", "requested", "desired", "sought", "exact", "answer",
    "result", "value", "solution", "number", "of", "to", "for", "this", "given", "expression", "problem",
    "question", "computation", "calculation", "quantity", "as", "posed", "what", "asks", "ask", "asked", "we", "you",
    "want", "wants", "wanted", "is", "was", "were",
})
"""Words of a subject after the box that names only the answer (``is the value of the expression``)."""
_SUBJECT_AFTER_WORDS: Final = 8


def _names_the_box(joined: str) -> bool:
    """Whether the clause after a final box only names what the box is (``\\boxed{9901} is the value of the
    expression``, ``\\boxed{12} is the number of ways``, ``\\boxed{42} as the product``): a subject of at most
    eight words that names the answer, or, with the question known, shares a word with it or names a quantity it
    asks for (:func:`subject_asked`). A subject that hedges, denies or names another quantity (``is the approximate
    value``, ``is the number of ways for part (a)``, ``is its cube`` asked for N) is read with the box."""
    named = _NAMED_AFTER_THE_BOX.fullmatch(joined)
    if named is None:
        return False
    subject = named.group("subject")
    words = [word.lower() for word in re.findall(r"[A-Za-z']+", subject)]
    if (len(words) > _SUBJECT_AFTER_WORDS or _DENYING.search(subject) or _QUALIFYING.search(subject)
            or _LATER_CLAUSE_HEDGE.search(subject) or _TAKING_BACK.search(subject)):
        return False
    if all(word in _NAMING_WORDS for word in words):
        return names_what_is_asked(words)
    return subject_asked(words)


_IN_TOTAL: Final = re.compile(r"\s*\b(?:in\s+total|in\s+all|altogether|all\s+together|total)\W*\Z", re.IGNORECASE)
"""Words that close a box's clause and only say the value is the whole (``\\boxed{32} dollars in total``)."""
_DENYING: Final = re.compile(
    r"\b(?:not|no|never|nor|neither|none|nobody|nothing|cannot|\w+n't|if|unless|were|maybe|perhaps|think|believe|"
    r"instead|rather|claim\w*|\w*(?:wrong|incorrect|mistak|false|error|erroneous|untrue|bogus|invalid|suppos|alleg|"
    r"reported|tentativ|prelim|candidate|might|could|assum|hypothe|imagin|pretend|guess|doubt|likely|naive|distract|"
    r"careless|suspect|wonder)\w*|nah|nope|wish|bet|runner-up|second-best|"
    r"in\s+(?:the\s+)?(?:event|case)\s+(?:that|of)|in\s+case|"
    r"should\s+(?:the\s+\w+|it|there|this|that|[a-z])\s+(?:be|have)|"
    r"let\s+(?:[a-z]|the\s+\w+)\s+be|(?:previous|earlier|original|initial|old|former|first|last)\s+"
    r"(?:attempts?|tr(?:y|ies)|guess(?:es)?|drafts?|versions?|passes?))\b|\blet\s+[a-z]\s*=",
    re.IGNORECASE,
)
"""Words and stems that deny or suppose, looked for in the whole sentence before a final box (``It is
not \\boxed{42}``, ``Wrongly, we get \\boxed{42}``, ``If x were 1, \\boxed{42}``): a denial or a condition
anywhere in the sentence governs the box. A closed list that is never complete: :data:`_ANNOUNCING` is what
makes the clause next to the box sound."""
_QUALIFYING: Final = re.compile(
    r"\b(?:except|excluding|without|almost|nearly|about|around|roughly|(?<!\\)over|under|"
    r"(?<!\bas\s)(?:above|below)(?=\s*(?:[-+\d$\\(\[{]|\Z))|old|former|than|"
    r"at\s+(?:least|most)|no\s+(?:more|less|fewer)|minus|negative|plus|(?<!\\)times|twice|double(?!-)|triple|"
    r"half|third|quarter|"
    r"squared|cubed|reciprocal|inverse|opposite|"
    r"\w*(?:accura|apparent|previous|earlier|original|initial|approx|exceed|percent|fraction|portion|multiple|"
    r"seem|appear|trap|reject|extraneous|exclud|forbid|avoid|discrepan|subtotal|partial|intermediate|estimat|"
    r"ignor|hope|ballpark|guesstimat|eyeball)\w*|back-of-the-envelope|order\s+of\s+magnitude|"
    r"(?<!least\s)(?<!most\s)(?<!greatest\s)(?<!largest\s)(?<!smallest\s)(?<!minimum\s)"
    r"(?<!maximum\s)(?<!fewest\s)possib\w*|may|used\s+to|so\s+far|(?:lower|upper)\s+bounds?|according|glance|"
    r"given\s+that|provided|providing|whenever|more\s+or\s+less|or\s+(?:more|less|fewer|so)|give\s+or\s+take|"
    r"round\w*|truncat\w*|floor|ceiling|significant\s+(?:figures?|digits?)|decimal\s+places?|nearest|"
    r"(?:expected|believed|rumou?red|said|thought|predicted|going|yet|supposed|presumed|deemed|alleged|reported|"
    r"estimated|claimed|likely|unlikely|projected|hoped|meant|guessed|considered|rumored)\s+to\s+be)\b"
    r"|\b(?:approx|appr|apx|abt|ca|est|max|min|avg|prob|poss|vs|sig|figs)\.|\bs\.\s?f\.",
    re.IGNORECASE,
)
"""Words that change, bound or hedge the value they stand next to (``at most``, ``twice``, ``the previous
result is``, ``the approximate area is``, ``$x \\approx$``), looked for in the box's own clause and in clauses
of at most two words (``Roughly, the answer is``): in an earlier clause they qualify something else (``Using the
formula above, the result is``, ``Since the fraction simplifies, we get``). ``the least possible value`` is a
superlative, not a possibility. ``\\times`` and ``\\over`` are operators in a formula (``$6 \\times 7 =
\\boxed{42}$``), not the words."""
_SHORT_CLAUSE_WORDS: Final = 2


def _qualifies_the_box(before: str) -> bool:
    """Whether the part of the box's sentence that states it holds a word of :data:`_QUALIFYING`, or a clause of
    at most two words does (an adverb set off by commas: ``Roughly, the answer is``).

    The stating part is what follows the last conclusion word (``so``, ``therefore``, ``thus``, ``hence``), less a
    leading clause that opens with a preposition, a participle or a subordinator (``Using the formula above,``,
    ``Since the fraction simplifies,``): those give a reason and qualify something else. Commas alone do not end
    it, so ``The answer is at most, by the pigeonhole argument, \\boxed{42}`` is read whole."""
    clauses = _CLAUSE_BREAK.split(before)
    if any(_QUALIFYING.search(clause) for clause in clauses[:-1] if len(clause.split()) <= _SHORT_CLAUSE_WORDS):
        return True
    conclusions = list(re.finditer(_CONCLUDING_WORDS, before, re.IGNORECASE))
    stating = before[conclusions[-1].end() :] if conclusions else before
    opener = _OPENING_CLAUSE.match(stating)
    if opener is not None and re.search(r"[A-Za-z]", stating[opener.end() :]):
        stating = stating[opener.end() :]  # the box opening its clause is stated by the clause before it
    return bool(_QUALIFYING.search(stating))


_OPENING_CLAUSE: Final = re.compile(
    r"\W*(?:using|since|because|as|from|after|by|with|combining|plugging|substituting|ignoring|taking|applying|"
    r"adding|solving|simplifying|counting|rejecting|excluding|discarding|noting|recalling|following|putting|"
    r"comparing|multiplying|dividing|subtracting|evaluating|checking|given|at|in|for|on|once|now\s+that)\b"
    r"[^,;:]*[,;:]",
    re.IGNORECASE,
)


_ANNOUNCING: Final = frozenset({
    "the", "a", "an", "final", "answer", "answers", "result", "results", "total", "value", "sum", "solution",
    "is", "are", "was", "be", "will", "would", "equals", "equal_to", "amounts_to", "comes_to", "of",
    "we", "i", "you", "it", "this", "that", "which", "she", "he", "they", "our", "my", "its", "their", "us",
    "get", "gets", "got", "obtain", "obtains", "obtained", "find", "finds", "found", "have", "has", "had",
    "make", "makes", "made", "give", "gives", "gave", "yield", "yields", "become", "becomes", "is:",
    "therefore", "thus", "so", "hence", "then", "now", "and", "but", "required", "desired", "number",
    "**", "*", "=", "boxed", "final_answer", "exactly", "precisely", "conclusion", "summary", "conclude", "concludes",
    "putting_together", "finally", "overall", "altogether", "in_conclusion", "in_total", "in_summary",
    "all", "leads_to", "there_we_have_it", "that_is_it", "end_up_with", "comes_out_to",
})
"""Every word the clause right before a final box may hold (it starts at the sentence or at the last
comma, colon, semicolon or ``so``/``therefore``...): a closed list, so a clause that says anything else
(``It is mistakenly``, ``Janet makes``) is read with the answer and makes it unreadable."""
_COPULAS: Final = frozenset({
    "is", "are", "was", "equals", "equal_to", "amounts_to", "comes_to", "be", "=", "is:", "are:", "get", "gets",
    "got", "obtain", "obtains", "obtained", "find", "finds", "found", "yields", "gives", "makes", "made", "has",
    "have", "had", "totals", "becomes", "answer:", "result:", "comes_out_to", "end_up_with",
})
"""Verbs that may stand right before a final box after a short subject (``the area is``)."""
_SUBJECT_WORDS: Final = 8
"""At most this many words of subject before such a verb: a longer clause is prose, not a subject."""
_JOINED_PHRASES: Final = ((re.compile(r"\b(equals?|amounts|comes)\s+to\b", re.IGNORECASE), r"\1_to"),
                          (re.compile(r"\bfinal\s+answer\b", re.IGNORECASE), "final_answer"),
                          (re.compile(r"\bputting\s+(?:it\s+)?(?:all\s+)?together\b", re.IGNORECASE),
                           "putting_together"),
                          (re.compile(r"\bin\s+(conclusion|total|summary)\b", re.IGNORECASE), r"in_\1"),
                          (re.compile(r"\b(?:leads?|led)\s+(?:us\s+)?to\b", re.IGNORECASE), "leads_to"),
                          (re.compile(r"\b(?:there|here)\s+we\s+have\s+it\b", re.IGNORECASE), "there_we_have_it"),
                          (re.compile(r"\b(?:that|this)(?:'s|\u2019s|\s+is)\s+it\b", re.IGNORECASE), "that_is_it"),
                          (re.compile(r"\b(?:end(?:s|ed)?|wind(?:s)?|wound)\s+up\s+with\b", re.IGNORECASE),
                           "end_up_with"),
                          (re.compile(r"\b(?:works?|worked|comes?|came)\s+out\s+(?:to|as)\b", re.IGNORECASE),
                           "comes_out_to"))
_CONCLUDING_WORDS: Final = r"\b(?:so(?!\s+far\b)|therefore|thus|hence|consequently)\b"
_CLAUSE_BREAK: Final = re.compile(r",(?!\d)|[;:\u2014]|" + _CONCLUDING_WORDS, re.IGNORECASE)
"""Where a clause ends; a comma before a digit is part of a number (``\\boxed{42},000``)."""


def in_sentence(text: str, bounds: tuple[int, int], answer: str) -> str:
    """The final ``answer`` together with the prose a reader reads with it in its sentence.

    The rest of the clause after the box is part of the answer (``\\boxed{42} is wrong``,
    ``\\boxed{42} thousand``, ``\\boxed{18} dollars``), so the grader reads it: a unit or a counted
    noun is allowed, any other word makes the answer unreadable. Only a closed list of phrases that
    announce the answer (``is the final answer``) is left out; the clauses after a comma join it
    only when they deny or change the value. Before the box, the sentence is read with it when the
    clause next to the box holds any word outside a closed list of announcing words (``The answer
    is``, ``we get``), or the sentence holds a word that denies, supposes or changes a value
    (``not``, ``if``, ``wrongly``, ``at most``)."""
    begin, end = bounds
    stop = _sentence_stop(text, end)
    after = text[end : stop.start() if stop else min(len(text), end + CONTEXT_WINDOW)]
    after = _QED_COMMANDS.sub(" ", _CHEERFUL_MARKS.sub(" ", after))  # "\boxed{42} \u2728", "\boxed{42} $\blacksquare$"
    after = _CHECK_MARKS.sub(" ", _STRONG_EMPHASIS.sub(" ", _MATH_DELIMITERS.sub(" ", after))).strip()
    if _EXACTLY.fullmatch(after):
        after = ""  # "\boxed{259} (exactly, with no rounding needed)": the value is exact, as boxed
    if stop is not None and stop.group() == "?":
        after += "?"  # "The answer is \boxed{42} ?": the sentence asks, and its question mark is read with it
    joined, later = _split_clause(after)
    joined = _IN_TOTAL.sub("", joined)  # "$\boxed{32}$ dollars in total": the unit is read, "in total" says nothing
    if _restated_in_words(after, answer):
        joined, later = "", ""  # "\boxed{42} (forty-two)", "\boxed{\frac{1}{3}}, that is, one over three"
    if not joined.strip(" .,;!)]") or _CLOSING_PHRASE.fullmatch(joined.strip(" .,;!")) or _names_the_box(joined):
        joined = ""
    keep_later = (_DENYING.search(later) or _QUALIFYING.search(later) or _TAKING_BACK.search(_prose_only(later))
                  or _FOREIGN_DOUBT.search(_prose_only(later)) or _NON_ENGLISH_LETTER.search(_prose_only(later))
                  or _LATER_CLAUSE_HEDGE.search(later) or _continues_with_a_value(later)
                  or _renames_another_value(later, answer) or _another_value_reported(later, _bare_text(answer))
                  or _concludes_another_value(later, _prose_only(later), answer)
                  or _unconfirmed_dash_tail(later) or _says_another_number_in_words(later, answer))
    after = " ".join(part for part in (joined, later if keep_later else "") if part)
    sentence_start = _sentence_start(text, begin)
    sentence = _CURRENCY_BEFORE_BOX.sub("", _LINE_MARKER.sub("", text[sentence_start:begin]))
    as_written = sentence  # before words set in formulas and quoted questions are read as prose
    cells = _table_cells_before(sentence)
    if cells is not None:  # a Markdown table row: the cell before the box's labels it, "|" separates clauses
        sentence = cells
        after = after.replace("|", ";").strip(" ;")
    if not _prose_only(sentence).strip(" \t\n*#>"):  # the box opens its line: a label may head it
        label_line, sentence_start = _label_line_above(text, sentence_start)
        sentence = label_line + sentence
    if len(sentence) >= CONTEXT_WINDOW:
        return LONG_SENTENCE
    # "\text{the answer} &= \boxed{720}" in an align block says what "The answer is" says; a check mark or an
    # arrow before the box only points to it.
    sentence = _ANSWER_POINTERS.sub(" ", _TEXT_WORDS.sub(r" \1 ", sentence).replace("&", " "))
    sentence = _QUOTED_QUESTION.sub(_question_unquoted, _CHEERFUL_MARKS.sub(" ", sentence))
    before = _MATH_DELIMITERS.sub(" ", sentence)
    prose = _prose_only(sentence)
    clauses = _CLAUSE_BREAK.split(prose)
    label = _label_before_colon(prose)
    # The clause next to the box announces it; when the box opens its own clause ("Perhaps, \boxed{42}"), the
    # last clause that says anything must (a hedge in a language the lists do not hold is not announcing).
    spoken = next((clause for clause in reversed(clauses) if clause.strip(" *_#>")), "")
    if _concluded_from_its_value(sentence, answer):
        spoken = ""  # "There are $4!/2 = 12$ ways, so \boxed{12}": the conclusion word announces the box
    announced = (_only_announces(spoken) and (label is None or _only_announces(label))
                 and not _interjected_aside(clauses) and not _parenthetical_aside(prose))
    # The formula the box closes may have been read into the answer ("$$ w = \boxed{193} $$" reads "w = {193}").
    box_at = _BOX_START.search(text, begin, end)
    closed = sentence + (text[begin : box_at.start()] if box_at is not None else "")
    made_from = name_made_from_the_answer(text[max(0, sentence_start - CONTEXT_WINDOW) : sentence_start], closed)
    quoted = _quotation_not_adopted(text, begin, prose)
    lead = (before.strip() if _DENYING.search(before) or _qualifies_the_box(before) or not announced
            or _DISOWNING.search(prose) or _DISOWNING_LEAD.search(prose)  # "As a wild stab, the answer is"
            or _QUALIFYING_LEAD.search(before) or _FOREIGN_DOUBT.search(prose) or _QUESTIONED_RELATION.search(sentence)
            or _NON_ENGLISH_LETTER.search(prose) or not _formula_asked(spoken, sentence) else "")
    if lead and _announces_in_another_language(before):
        lead = ""
    if quoted:
        lead = f"(quoted) {quoted} {before.strip()}"
    head = closed[len(sentence) :]  # "q = " of "$q = \boxed{...}$", read into the answer
    footnote = _FOOTNOTE_ON_ANSWER.search(as_written)
    marked = ((footnote.group() if footnote else None) or _qualifying_subscript(as_written + head)
              or _another_question_quoted(as_written))
    if marked:  # "The answer[^1] is", "$C_{\text{draft}} = \boxed{50}$", 'To the question "..." (not this one)'
        lead = f"{marked} {lead or before.strip()}"
    if made_from:  # the sentence may be empty: "$$ w = \boxed{193} $$" on a line of its own
        lead = f"(a name the reply made from the answer) {before.strip()}"
    framing = _framing_sentence(text, sentence_start, answer, corrects=bool(_CORRECTING.search(before)))
    if framing:
        lead = f"{framing} {before.strip()}"
    if not (after or lead):
        return answer
    return " ".join(part for part in (lead, "{" + answer.strip() + "}", after) if part)


_FOOTNOTE_ON_ANSWER: Final = re.compile(
    r"\b(?:answer|result|total|value|solution)s?\s*(?:\[\^\w{1,10}\]|<sup>[^<]{1,6}</sup>|[\u2020\u2021\u00a7\u00b9\u00b2\u00b3"
    r"\u2074-\u2079]|\\?\*(?=\s)|\^\{?\\?\*\}?|\$\^\{?[*\\dagger]+\}?\$)",
    re.IGNORECASE,
)
"""A footnote mark on the word that names the answer (``The answer[^1] is``, ``The answer<sup>\u2020</sup> is``): the
answer is qualified by a note a reader must read with it."""
_TEXT_SUBSCRIPT: Final = re.compile(r"_\{?\s*\\(?:text|textrm|mathrm|mbox|textit|operatorname)\s*\{(?P<words>[^{}]*)\}")
_STATUS_SUBSCRIPTS: Final = frozenset({
    "draft", "guess", "guessed", "rough", "approx", "estimate", "est", "old", "prev", "previous", "initial", "trial",
    "try", "temp", "tmp", "rejected", "wrong", "alt", "alternative", "before", "pre", "partial", "aux", "key", "helper",
    "provisional", "tentative", "scratch", "dummy", "placeholder", "naive", "bad", "fake", "test", "sample",
    "toy", "other", "bob", "alice", "friend", "classmate", "book", "tax", "untaxed", "pretax", "gross", "net", "half",
    "double", "twice", "sub", "part", "step",
})
"""Words of a subscript that say which value a name holds, when the question does not use them (``C_{\\text{draft}}``,
``N_{\\text{guess}}``, ``E_{\\text{before tax}}``); a subscript of the problem's own
(``\\lambda_{\\text{threshold}}``) is left alone."""


def _qualifying_subscript(closed: str) -> str | None:
    """A name the box closes whose subscript says it holds another value than the one asked (``C_{\\text{draft}} =``,
    ``E_{\\text{before tax}} =``): a word of :data:`_STATUS_SUBSCRIPTS` the question does not use. ``None`` without a
    question, or for a subscript of the problem's own (``N_{\\text{total}}``, ``\\lambda_{\\text{threshold}}``)."""
    asked = question_words()
    opened = closed.rsplit("$", 1)[-1] if "$" in closed else closed
    found = _TEXT_SUBSCRIPT.search(opened)
    if asked is None or found is None:
        return None
    words = [word.lower() for word in re.findall(r"[A-Za-z]{2,}", found.group("words"))]
    if not any(word in _STATUS_SUBSCRIPTS and singular(word) not in asked for word in words):
        return None
    return f"(subscript: {found.group('words').strip()})"


_QUOTED_TEXT: Final = re.compile(r"[\"\u201c](?P<quoted>[^\"\u201c\u201d]{12,400}\?)[\"\u201d]")


def _another_question_quoted(sentence: str) -> str | None:
    """A question quoted in the box's sentence that is not the question being answered (``To the question "how
    many rooms ... ?" the answer is``): the box answers the quoted one. ``None`` without a question."""
    asked = question_text()
    found = _QUOTED_TEXT.search(sentence)
    if asked is None or found is None:
        return None
    return None if _squashed(found.group("quoted")) in _squashed(asked) else "(another question quoted)"


def _squashed(text: str) -> str:
    """Letters and digits only, lower case: a quoted question is the asked one when its squashed text is part of it."""
    return re.sub(r"[^a-z0-9]", "", text.lower())


def _quotation_not_adopted(text: str, begin: int, prose: str) -> str | None:
    """For a box in a Markdown blockquote, what keeps the reply from adopting it, else ``None``. A quotation is
    someone's words (``My classmate's sheet ends:`` over ``> Thus we get \\boxed{29}.``); the reply makes it its
    answer only by labelling it so inside the quote (``> **Final answer**``, ``> Answer: \\boxed{5}``), with no
    line above the quote introducing it as another's (a line ending in a colon must announce the answer)."""
    line_start = text.rfind("\n", 0, begin) + 1
    if not text[line_start:begin].lstrip().startswith(">"):
        return None
    block_start = line_start
    while block_start > 0:
        above = text.rfind("\n", 0, block_start - 1) + 1
        if not text[above : block_start - 1].lstrip().startswith(">"):
            break
        block_start = above
    quote = text[block_start:begin]
    if not _QUOTE_LABEL.search(_prose_only(quote)):
        return "a quotation that does not say it is the answer"
    block_end = begin
    while True:  # the rest of the quote, to its last line
        next_line = text.find("\n", block_end)
        if next_line < 0 or not text[next_line + 1 :].lstrip(" \t").startswith(">"):
            break
        block_end = next_line + 1
    rest = text[begin : text.find("\n", block_end) if text.find("\n", block_end) >= 0 else len(text)]
    credit = _CREDIT_LINE.search(rest) or _CREDIT_LINE.search(quote)
    if credit is not None:
        return credit.group().strip()
    intro = text[:block_start].rstrip()
    intro_line = intro[intro.rfind("\n") + 1 :].strip()
    if intro_line.endswith(":") and not _only_announces(_prose_only(intro_line[:-1])):
        return intro_line
    return None


_CREDIT_LINE: Final = re.compile(
    r"^[ \t]*>+[ \t]*(?:[\u2014\u2013\u2015~]|--)[ \t]*\S.*$|\b(?:posted|written|shared|sent|forwarded)\s+by\b|"
    r"\bu/\w+|^[ \t]*>+[ \t]*(?:from|sent|subject|wrote)\s*:|\bwrote\s*:",
    re.IGNORECASE | re.MULTILINE,
)
"""A quote credited to someone (``> \u2014 Priya, in the class forum``, ``posted by``, ``u/name``, a forwarded
header)."""
_QUOTE_LABEL: Final = re.compile(r"\b(?:final\s+)?(?:answer|result|solution)s?\b", re.IGNORECASE)


_LINE_MARKER: Final = re.compile(
    r"\A[ \t]*(?:>[ \t]*)+(?:[-*+\u2022][ \t]+(?=[A-Za-z*_]))?|\A[ \t]*[-*+\u2022][ \t]+(?=[A-Za-z*_])")
"""A blockquote's ``>`` and a list item's bullet before words (``> **Answer:**``, ``- Final answer:``): layout. A
bullet right before a box stays (``- \\boxed{5}`` may be a minus sign)."""
_CURRENCY_BEFORE_BOX: Final = re.compile(r"(?:\\\$|\\text\{\s*\\\$\s*\}|\\textdollar)\s*\Z")
"""A dollar sign written right before the box (``is \\$\\boxed{36}``): the box's currency, not a word of the
sentence."""


_QUALIFYING_LEAD: Final = re.compile(
    r"^\W*(?:(?:for|when|whenever)\s+(?:even|odd|positive|negative|large|small|integer|prime)\b"
    r"|(?:for|when|whenever)\s+(?:\S+\s+){0,2}?[A-Za-z]\s*(?:=|<|>|\\[lgn]eq?|\\neq?)\s*[-\w]+"
    r"|in\s+(?:the\s+)?(?:case|scenario)\b|in\s+(?:base|hexadecimal|hex|octal|binary)\b|in\s+(?:the\s+)?limit"
    r"|in\s+(?:the|this|a|our)\s+(?:miniature|toy|smaller|simpler|simplified|scaled[-\s]down|baby|sample|example|"
    r"special|test|reduced|trial)\s+(?:analogue|analog|version|case|instance|problem|example|setting|variant)"
    r"|(?:just|only)\s+for\b|(?:per\s+(?:head|person|capita|unit|item|piece|day|week|hour|month|trip|box|bag)|"
    r"individually)(?=\s*,)"
    r"|pre-\w+|leaving\s+\w+(?:\s+\w+)?\s+out\b|on\s+a\s+per-?\s?\w+\s+basis|through\s+the\s+\w+\s+(?:stage|step|part|phase)"
    r"|for\s+the\s+(?:first|second|third|last|morning|evening|afternoon|night|\w+)\s+(?:shift|stage|part|phase|half|leg)"
    r"|(?:ignoring|dropping|neglecting|disregarding|relaxing|removing|without)\s+(?:the\s+|this\s+|that\s+|any\s+)?"
    r"(?:constraints?|conditions?|restrictions?|requirements?|assumptions?|overlap|order|edge\s+cases?|"
    r"(?:the\s+)?\$[^$]*\$)|before\s+(?:divid|multipl|subtract"
    r"|add|round|simplif|convert|halv|doubl)\w*|halfway|for\s+now|at\s+first|initially|provisionally|tentatively"
    r"|by\s+a\s+(?:flawed|wrong|bad|naive|rough|quick)|my\s+(?:hunch|gut|instinct)"
    r"|up\s+to\s+(?:an?\s+|the\s+)?(?:overall\s+)?(?:sign|constant|additive|multiplicative|factor|scal\w*"
    r"|normali[sz]\w*"
    r"|rounding|error|order|units?|terms?|powers?)|to\s+(?:first|second|leading|lowest|zeroth|\w+th)\s+order"
    r"|(?:at|in)\s+(?:first|leading|lowest)\s+order)\b",
    re.IGNORECASE,
)
"""A leading clause that narrows the box to a case, a base, an altered problem, a provisional step or an
approximation (``For even $n$,``, ``In base 7,``, ``Ignoring the constraint,``, ``Before dividing by 2,``, ``For
now,``, ``Up to sign,``, ``To first order,``)."""
_TEXT_WORDS: Final = re.compile(r"\\(?:text|textrm|mathrm|textbf|mbox)\s*\{([^{}]*)\}")
"""Words set in a formula (``\\text{the answer}``), read as the prose they are."""
_QUESTIONED_RELATION: Final = re.compile(r"\\(?:stackrel|overset|underset)\s*\{[^{}]*\?")
"""A relation drawn with a question mark over it (``\\stackrel{?}{=} \\boxed{42}``): the writer asks if it holds."""
_QUOTED_QUESTION: Final = re.compile(
    r"\b(answering|answer\s+to|for|to)\s+the\s+(?:question|problem)\s*(?:\"[^\"]*\"|\u201c[^\u201d]*\u201d)",
    re.IGNORECASE)
"""The problem quoted before the box (``answering the question "How many ...?": the answer is``): its words are
the question's, not the reply's (see :func:`_question_unquoted`)."""


def _question_unquoted(quoted: re.Match[str]) -> str:
    """``answering the question "..."`` only introduces what follows; ``the answer to the question "..."`` names
    the answer to the question, as ``the answer to the question`` does."""
    if _ANSWER_IN_QUOTE.search(quoted.group()) or _TAKING_BACK.search(quoted.group()):
        return quoted.group()  # "What is one less than the answer?", "What was my rejected guess?": read it
    lead = quoted.group(1)
    return " " if lead.lower() == "answering" else f" {lead} the question "


_ANSWER_IN_QUOTE: Final = re.compile(r"[\"\u201c].*\b(?:answer|result|solution|box\w*)\b", re.IGNORECASE)

_CHECK_MARK_CHARACTERS: Final = "\u2713\u2714\u2705\u2611"
_CHEERFUL_MARK_CHARACTERS: Final = (
    "\u2728\u2b50\u263a\ufe0f\u2764\U0001f389\U0001f60a\U0001f642\U0001f44d\U0001f4af\U0001f680\U0001f31f\U0001f973")
"""Sparkles, a star, smiles, a heart, a celebration, a thumbs-up, 100, a rocket, a glowing star, a party face:
they cheer the answer on and say nothing of its value."""
_CHEERFUL_MARKS: Final = re.compile(f"[{_CHEERFUL_MARK_CHARACTERS}]")
_POINTER_CHARACTERS: Final = "\u27a1\u2192\u21d2\u27f9\u27f6\ufe0f\U0001f449\U0001f3af\U0001f4cc\u2234"
"""Arrows (a plain, a double and a long one), a pointing hand, a target, a pin and the therefore sign."""
_POINTING_CHARACTERS: Final = frozenset(_CHECK_MARK_CHARACTERS + _POINTER_CHARACTERS + _CHEERFUL_MARK_CHARACTERS)
"""The marks a sentence may point to or cheer its box with (:data:`_ANSWER_POINTERS`, :data:`_CHEERFUL_MARKS`)."""
_FORMATTING_COMMANDS: Final = re.compile(
    r"\\(?:text(?:bf|it|sf|tt|rm|up|sc|md|normal)|emph|underline|uline|mbox|hbox|fbox|framebox|ovalbox|doublebox"
    r"|shadowbox|boldsymbol|mathbf|mathit|mathsf|mathtt|mathrm|bm|pmb)(?![A-Za-z])\s*"
    r"|\\(?:colorbox|textcolor|color|fcolorbox)\s*(?:\[[^\]]*\])?\s*\{[^{}]*\}(?:\s*\{[^{}]*\}(?=\s*\{))?"
    r"|\\(?:bf|it|sf|tt|rm|sc|em|sl|tiny|scriptsize|footnotesize|small|normalsize|large|Large|LARGE|huge|Huge"
    r"|bfseries|itshape|ttfamily|sffamily|rmfamily|scshape|upshape|mdseries)(?![A-Za-z])"
    r"|</?(?:strong|b|em|i|u|mark|span|font|big|small|ins|code|kbd|var|samp|cite|q|center|p|div)\b[^<>]*>")
"""Commands and tags that only set how words look (``\\textbf{43}``, ``{\\Large 43}``, ``<strong>43</strong>``):
dropped from a later sentence, so the value they wrap is read like any other."""


def _formatting_dropped(sentence: str) -> str:
    """A later sentence as a reader reads it: end-of-proof commands are the \u220e mark, formatting commands and
    tags and Markdown's underscores of emphasis are gone."""
    sentence = _FORMATTING_COMMANDS.sub(" ", _QED_COMMANDS.sub("\u220e", sentence))
    return _UNDERSCORE_EMPHASIS.sub(" ", sentence)


_UNDERSCORE_EMPHASIS: Final = re.compile(
    r"(?<![A-Za-z0-9\\{^])_+(?=[A-Za-z])|(?<=[A-Za-z.!?])_+(?![A-Za-z0-9{])")
"""Markdown's underscores around words (``_Not final._``): emphasis, which would hide the words from a search
for whole words; a subscript (``a_n``, ``x_{1}``) is kept."""
_QED_COMMANDS: Final = re.compile(r"\\(?:blacksquare|square|Box|qed|qedsymbol|hfill)(?![A-Za-z])")
"""LaTeX's end-of-proof marks (``$\\blacksquare$``), drawn as the \u220e a later sentence may be."""
_ANSWER_POINTERS: Final = re.compile(
    f"[{_CHECK_MARK_CHARACTERS}{_POINTER_CHARACTERS}]"
    r"|\\therefore(?![A-Za-z])(?:\s*\\q?quad(?![A-Za-z]))?")
"""Check marks, arrows, a target or a pin before a box (``\u2705 Final Answer:``, ``\u27a1\ufe0f``, ``\U0001f3af``), and
"therefore" written as a symbol (``$$\\therefore\\quad \\boxed{25}$$``, ``\u2234``): they point to it."""


_OTHER_LANGUAGE_ANNOUNCEMENTS: Final = re.compile(
    # French
    r"(?:(?:donc|ainsi|alors|par\s+cons[e\u00e9]quent|en\s+conclusion|finalement|au\s+final|enfin)\s*,?\s*)?"
    r"(?:(?:(?:la|le|notre|ma)\s+)?(?:r[e\u00e9]ponse|r[e\u00e9]sultat|solution)(?:\s+finale?)?(?:\s+(?:est"
    r"|vaut))?(?:\s+donc)?"
    r"|(?:on|nous)\s+(?:obtient|obtenons|trouve|trouvons)(?:\s+donc)?)"
    # German
    r"|(?:(?:also|somit|daher|folglich|insgesamt)\s*,?\s*)?"
    r"(?:(?:(?:die|das|unsere|meine)\s+)?(?:antwort|ergebnis|endergebnis|endantwort|l[o\u00f6]sung)"
    r"(?:\s+(?:ist|lautet))?(?:\s+(?:also|somit|daher))?|wir\s+erhalten(?:\s+also)?)"
    r"|(?:also|somit|daher|damit|folglich)\s+(?:ist|lautet|erhalten\s+wir)(?:\s+(?:die|das|unsere)\s+"
    r"(?:antwort|ergebnis|endergebnis|l[o\u00f6]sung))?"
    # Spanish
    r"|(?:(?:por\s+lo\s+tanto|por\s+tanto|as[i\u00ed]\s+que|entonces|en\s+conclusi[o\u00f3]n|finalmente)\s*,?\s*)?"
    r"(?:(?:(?:la|el|nuestra|mi)\s+)?(?:respuesta|resultado|soluci[o\u00f3]n)(?:\s+final)?(?:\s+es)?|obtenemos)"
    # Russian
    r"|(?:(?:\u0442\u0430\u043a\u0438\u043c\s+\u043e\u0431\u0440\u0430\u0437\u043e\u043c|\u0438\u0442\u0430\u043a"
    r"|\u0441\u043b\u0435\u0434\u043e\u0432\u0430\u0442\u0435\u043b\u044c\u043d\u043e)\s*,?\s*)?"
    r"(?:(?:\u043e\u043a\u043e\u043d\u0447\u0430\u0442\u0435\u043b\u044c\u043d\u044b\u0439|"
    r"\u0438\u0442\u043e\u0433\u043e\u0432\u044b\u0439)\s+)?"
    r"(?:\u043e\u0442\u0432\u0435\u0442|\u0440\u0435\u0437\u0443\u043b\u044c\u0442\u0430\u0442)"
    # Chinese: so / therefore / in sum, final, answer / result, is
    r"|(?:\u6240\u4ee5|\u56e0\u6b64|\u6545|\u7efc\u4e0a\u6240\u8ff0)?\s*[,\uff0c]?\s*(?:\u6700\u7ec8|\u6700\u540e)?"
    r"(?:\u7684)?(?:\u7b54\u6848|\u7ed3\u679c|\u7b54)(?:\u662f|\u4e3a)?"
    # Italian
    r"|(?:(?:pertanto|quindi|dunque|cos[i\u00ec]|in\s+conclusione|infine|alla\s+fine)\s*,?\s*)?"
    r"(?:(?:(?:la|il|la\s+nostra|il\s+nostro)\s+)?(?:risposta|risultato|soluzione)(?:\s+finale)?(?:\s+[e\u00e8])?"
    r"|otteniamo)"
    # Portuguese
    r"|(?:(?:logo|portanto|assim|ent[a\u00e3]o|em\s+conclus[a\u00e3]o|finalmente|por\s+fim)\s*,?\s*)?"
    r"(?:(?:(?:a|o|a\s+nossa|o\s+nosso)\s+)?(?:resposta|resultado|solu[c\u00e7][a\u00e3]o)(?:\s+final)?"
    r"(?:\s+[e\u00e9])?|obtemos)"
    # Japanese: so / therefore / from the above, (final) answer / the value sought, topic particle
    r"|(?:(?:\u3057\u305f\u304c\u3063\u3066|\u3088\u3063\u3066|\u3086\u3048\u306b|\u4ee5\u4e0a\u3088\u308a"
    r"|\u4ee5\u4e0a\u304b\u3089)\s*[\u3001,]?\s*)?(?:\u6700\u7d42\u7684\u306a)?"
    r"(?:\u7b54\u3048|\u89e3\u7b54|\u7b54|\u6c42\u3081\u308b\u5024)(?:\u306f)?"
    # Korean: so / therefore, (final) answer / correct answer, topic particle
    r"|(?:(?:\uadf8\ub7ec\ubbc0\ub85c|\ub530\ub77c\uc11c)\s*,?\s*)?(?:\ucd5c\uc885\s*)?"
    r"(?:\ub2f5|\uc815\ub2f5|\uacb0\uacfc)(?:\uc740|\ub294)?"
    # Dutch: so / therefore / in conclusion, (final) answer / result / solution, is
    r"|(?:(?:dus|daarom|derhalve|zodoende|concluderend|uiteindelijk|kortom|tot\s+slot)\s*,?\s*)?"
    r"(?:(?:(?:het|de|ons|onze|mijn)\s+)?(?:eind)?(?:antwoord|resultaat|uitkomst|oplossing)(?:\s+(?:is|luidt))?"
    r"(?:\s+(?:dus|daarom|derhalve))?|(?:we|wij)\s+(?:krijgen|vinden|verkrijgen)(?:\s+dus)?"
    r"|(?:dus|daarom|derhalve)\s+(?:is|luidt)\s+(?:het|ons)\s+(?:eind)?(?:antwoord|resultaat))"
    # Swedish: so / therefore, the (final) answer / result / solution, is
    r"|(?:(?:allts\u00e5|d\u00e4rf\u00f6r|s\u00e5ledes|sammanfattningsvis|slutligen|s\u00e5)\s*,?\s*)?"
    r"(?:(?:det\s+)?(?:slutgiltiga\s+)?(?:svaret|svar|slutsvaret|slutsvar|resultatet|resultat|l\u00f6sningen)"
    r"(?:\s+(?:\u00e4r|blir))?(?:\s+(?:allts\u00e5|d\u00e4rf\u00f6r|s\u00e5ledes))?|vi\s+(?:f\u00e5r"
    r"|erh\u00e5ller)(?:\s+allts\u00e5)?"
    r"|(?:allts\u00e5|d\u00e4rf\u00f6r|s\u00e5ledes|s\u00e5)\s+(?:\u00e4r|blir)\s+(?:svaret|resultatet|l\u00f6sningen))"
    # Polish: so / therefore / finally, (final) answer / result / solution, is
    r"|(?:(?:zatem|wi\u0119c|st\u0105d|dlatego|ostatecznie|podsumowuj\u0105c|w\s+rezultacie)\s*,?\s*)?"
    r"(?:(?:(?:ostateczn[aey]|ko\u0144cow[aey])\s+)?(?:odpowied[\u017az]|wynik|rozwi\u0105zanie)"
    r"(?:\s+(?:ostateczn[aey]|ko\u0144cow[aey]))?(?:\s+(?:to|jest|wynosi|brzmi))?|otrzymujemy)"
    # Ukrainian: so / thus / finally, (final) answer / result, is
    r"|(?:(?:\u043e\u0442\u0436\u0435|\u0442\u0430\u043a\u0438\u043c\s+\u0447\u0438\u043d\u043e\u043c"
    r"|\u0442\u043e\u043c\u0443|\u0437\u0432\u0456\u0434\u0441\u0438"
    r"|\u043e\u0441\u0442\u0430\u0442\u043e\u0447\u043d\u043e)\s*,?\s*)?"
    r"(?:(?:(?:\u043e\u0441\u0442\u0430\u0442\u043e\u0447\u043d\u0430|\u043a\u0456\u043d\u0446\u0435\u0432\u0430"
    r"|\u043e\u0441\u0442\u0430\u0442\u043e\u0447\u043d\u0438\u0439"
    r"|\u043a\u0456\u043d\u0446\u0435\u0432\u0438\u0439)\s+)?"
    r"(?:\u0432\u0456\u0434\u043f\u043e\u0432\u0456\u0434\u044c|\u0440\u0435\u0437\u0443\u043b\u044c\u0442\u0430\u0442)"
    r"(?:\s+(?:\u0454|\u0434\u043e\u0440\u0456\u0432\u043d\u044e\u0454"
    r"|\u0441\u0442\u0430\u043d\u043e\u0432\u0438\u0442\u044c))?"
    r"|\u043e\u0442\u0440\u0438\u043c\u0443\u0454\u043c\u043e)"
    # Turkish: so / therefore / in conclusion, (final) answer / result
    r"|(?:(?:dolay\u0131s\u0131yla|bu\s+nedenle|bu\s+y\u00fczden|yani|sonu\u00e7\s+olarak|b\u00f6ylece"
    r"|o\s+halde)\s*,?\s*)?"
    r"(?:(?:nihai|son)\s+)?(?:cevap|cevab\u0131(?:m\u0131z)?|yan\u0131t(?:\u0131(?:m\u0131z)?)?|sonu\u00e7)"
    # Vietnamese: so / therefore / in sum, (final) answer / result, is
    r"|(?:(?:v\u1eady|do\s+\u0111\u00f3|v\u00ec\s+v\u1eady|nh\u01b0\s+v\u1eady|t\u00f3m\s+l\u1ea1i|suy\s+ra"
    r"|k\u1ebft\s+lu\u1eadn)\s*,?\s*)?"
    r"(?:\u0111\u00e1p\s+\u00e1n|\u0111\u00e1p\s+s\u1ed1|k\u1ebft\s+qu\u1ea3"
    r"|c\u00e2u\s+tr\u1ea3\s+l\u1eddi)(?:\s+cu\u1ed1i\s+c\u00f9ng)?(?:\s+(?:l\u00e0|b\u1eb1ng))?"
    # Indonesian: so / therefore / in conclusion, the (final) answer / result, is
    r"|(?:(?:jadi|maka|oleh\s+karena\s+itu|dengan\s+demikian|karena\s+itu|sehingga|kesimpulannya|akhirnya)\s*,?\s*)?"
    r"(?:(?:jawaban|hasil|penyelesaian|solusi)(?:nya)?(?:\s+akhir(?:nya)?)?(?:\s+(?:adalah|ialah|yaitu))?"
    r"|(?:kita|kami)\s+(?:peroleh|dapatkan|mendapatkan|memperoleh))"
    # Arabic: so / therefore, the (final) answer / result / solution, is
    r"|(?:(?:\u0625\u0630\u0646|\u0627\u0630\u0646|\u0625\u0630\u064b\u0627|\u0644\u0630\u0644\u0643"
    r"|\u0644\u0630\u0627|\u0648\u0628\u0627\u0644\u062a\u0627\u0644\u064a|\u0628\u0627\u0644\u062a\u0627\u0644\u064a"
    r"|\u0648\u0639\u0644\u064a\u0647)\s*[\u060c,]?\s*)?"
    r"(?:\u0627\u0644\u0625\u062c\u0627\u0628\u0629|\u0627\u0644\u0627\u062c\u0627\u0628\u0629"
    r"|\u0627\u0644\u062c\u0648\u0627\u0628|\u0627\u0644\u0646\u062a\u064a\u062c\u0629|\u0627\u0644\u062d\u0644)"
    r"(?:\s+(?:\u0627\u0644\u0646\u0647\u0627\u0626\u064a\u0629"
    r"|\u0627\u0644\u0646\u0647\u0627\u0626\u064a))?(?:\s+(?:\u0647\u064a|\u0647\u0648))?"
    # Hindi: so / therefore, the required or final answer / result (the copula follows the box)
    r"|(?:(?:\u0905\u0924\u0903|\u0905\u0924:|\u0907\u0938\u0932\u093f\u090f"
    r"|\u0907\u0938\s+\u092a\u094d\u0930\u0915\u093e\u0930|\u0924\u094b)\s*,?\s*)?"
    r"(?:(?:\u0905\u092d\u0940\u0937\u094d\u091f|\u0905\u0902\u0924\u093f\u092e)\s+)?(?:\u0909\u0924\u094d\u0924\u0930"
    r"|\u0939\u0932|\u092a\u0930\u093f\u0923\u093e\u092e)(?:\s+(?:\u0939\u0948))?",
    re.IGNORECASE,
)
"""Whole sentences that only announce a box in French, German, Spanish, Russian, Chinese, Italian, Portuguese,
Japanese, Korean, Dutch, Swedish, Polish, Ukrainian, Turkish, Vietnamese, Indonesian, Arabic or Hindi
(``La r\u00e9ponse est donc``, ``Endergebnis:``, ``Somit ist das Ergebnis``, ``Por lo tanto, la respuesta es``,
"thus, the answer" in Russian, "so the final answer is" in Chinese): a closed list matched against the sentence
whole, so a word it does not hold (a denial, a hedge, a condition) leaves the box unreadable; the English lists
cannot read those languages."""


def _announces_in_another_language(before: str) -> bool:
    """Whether the whole sentence before the box (formulas included) is one of
    :data:`_OTHER_LANGUAGE_ANNOUNCEMENTS`, with Markdown emphasis and a closing colon left out."""
    bare = " ".join(_STRONG_EMPHASIS.sub(" ", before).replace("#", " ").split()).rstrip(" :\uff1a").strip()
    return bool(bare) and _OTHER_LANGUAGE_ANNOUNCEMENTS.fullmatch(bare) is not None


_FORWARD: Final = re.compile(
    r"\bthe\s+following\b|\bas\s+follows\b|\bfollows\W*$|\bbelow\W*$|\b(?:answer|value|box|result|number)\s+"
    r"below\b|\bbelow\s+is\b|\bhere(?:\s+is|'s)(?=\s+(?:my|an?|the)\b)|\bnext\s+(?:box|line|value|answer)\b",
    re.IGNORECASE,
)
"""A sentence that points to what comes next (``The following is``, ``... as follows.``, ``The answer below``)."""


_DOUBTING: Final = re.compile(
    r"\b(?:(?:not|n't|never)\s+(?:\w+\s+)?(?:sure|certain|confident|positive)|unsure|uncertain|unconfident|"
    r"(?:just|only|merely|wild|rough|educated)\s+(?:a\s+)?guess|(?:might|could|may)\s+(?:well\s+)?be\s+(?:wrong|"
    r"incorrect|off|mistaken)|no\s+idea|unverified|not\s+(?:been\s+)?(?:verified|checked)|"
    r"(?<!no\s)(?<!without\s)(?<!beyond\s)(?<!any\s)(?<!little\s)doubt\w*|"
    r"(?:low|little|no)\s+confidence|take\s+(?:this|it|that)\s+with\s+a\s+grain)\b",
    re.IGNORECASE,
)
"""Doubt about what follows, in the sentence right before the box's (``I'm not sure about this one.``)."""


_CORRECTING: Final = re.compile(
    r"\b(?:correct(?:ed)?|right|actual|fixed|revised|true)\s+(?:final\s+)?(?:answer|result|value)", re.IGNORECASE)
"""A box's sentence that corrects: an admitted mistake before it (``I made a mistake above.``) is what it mends."""


def _framing_sentence(text: str, sentence_start: int, answer: str, *, corrects: bool = False) -> str:
    """The sentence before the box's, when it denies or doubts the answer (``Not the answer.``, ``This isn't
    it.``, ``I'm not sure about this one.``), states another one (``The answer is 145.``), is a fragment that
    qualifies it (``Lower bound.``, ``Modulo 1000.``), or points forward to the box and denies, hedges or
    qualifies it (``The following is wrong.``, ``My guess is as follows.``). Otherwise nothing: a sentence about
    the work (``There are no other solutions.``, ``Suppose x = 2.``) does not govern the answer after it."""
    end = sentence_start
    while end > 0 and text[end - 1].isspace():
        end -= 1
    # The sentence's own closing marks are left out, or a full stop inside its last formula (``$x = 9.$``) would
    # read as a sentence that ended before it and leave nothing to read.
    closing = _CLOSING_MARKS.search(text, 0, end)
    previous_start = _sentence_start(text, closing.start() if closing and closing.start() else max(0, end - 1))
    previous = _prose_only(text[previous_start:end]).strip()
    if not previous or previous_start >= end:
        return ""
    if _DOUBTING.search(previous) or _denies_what_follows(text[previous_start:end], previous, answer, corrects):
        return previous  # "I am not sure about this one." right before the box: the doubt is the answer's
    earlier = _prose_only(text[_sentence_start(text, max(0, previous_start - 1)):previous_start]).strip()
    if re.search(_DISCLAIMING, earlier, re.IGNORECASE) and not corrects:
        return f"{earlier} {previous}"  # "I couldn't solve this one. What follows is filler." over the box
    disowned = _DISOWNING.search(_prose_only(text[max(0, sentence_start - CONTEXT_WINDOW):sentence_start]))
    if disowned is not None:
        return disowned.group()  # "## A shot in the dark", "Everything below is invented." anywhere above the box
    title = _unplain_title(text[:sentence_start])
    if title is not None:
        return title  # "# Layout mock-up (figures are dummies)" over the whole reply
    pointer = _FORWARD.search(previous)
    if pointer is None:
        return ""
    rest = previous[: pointer.start()] + " " + previous[pointer.end() :]
    if _DENYING.search(rest) or _TAKING_BACK.search(rest) or _FRAGMENT_HEDGE.search(rest):
        return previous
    if not pointer.group().lower().startswith("here") and _QUALIFYING.search(rest):
        return previous  # "The following is only an upper bound."; "Here is the computation: 6 times 7." is work
    return ""


_CLOSING_MARKS: Final = re.compile(r"[.!?](?:\$+|\\[)\]]|\*\*|__|\s)*\Z")
"""What closes a sentence: its full stop and the delimiters and emphasis after it (``8.$``, ``8.\\]**``)."""


_DISCLAIMING: Final = (
    r"\bfiller\b|\bcop(?:y|ying|ied)\s+(?:a|the|an|some)\b|\bnot\s+justified\b|\bunjustified\b|"
    r"\bI(?:'m|\s+am|\s+was)?\s+(?:\w+\s+){0,2}guess\w*|\b(?:my|a|pure|wild|blind)\s+guess\w*|\bguesswork\b|"
    r"\bprobably\s+not\b|\b(?:couldn't|could\s+not|can't|cannot|didn't|did\s+not)\s+(?:actually\s+)?"
    r"(?:solve|finish|figure|do|compute|check|work\s+out)\b|\bno\s+idea\b|\bwinging\b|\bmade\s+(?:it\s+)?up\b|"
    r"\bbluff\w*|\bcaveat\b|\bthin\s+air\b|\bnot\s+(?:sure|certain|confident)\b|\bjust\s+a\s+number\b"
)
"""A disclaimer of the work, read in the two sentences before the box's (``I couldn't solve this one.``, ``What
follows is filler.``, ``I'm just copying a number from the problem.``, ``Caveat lector: I'm guessing.``)."""
_DISOWNING: Final = re.compile(
    r"\b(?:shot|stab)\s+in\s+the\s+dark\b|\binvented\b|\bspitball\w*|"
    r"\b(?:picked|chosen|chose|pick|choose)\b[^.]{0,30}\bat\s+random\b|\bspeculat\w*|\bdice[-\s]roll\b|"
    r"\bcoin\s+(?:flip|toss)\s+answer\b|\bwild\s+(?:stab|guess)\b|\bmade\s+(?:it\s+)?up\b|\bguesswork\b|"
    r"\bpure\s+guess\w*|\b(?:could\s+not|couldn't|can't|cannot)\s+(?:solve|work\s+out|figure\s+out|do)\s+"
    r"(?:this|it|the\s+problem)\b|\bno\s+time\s+to\s+(?:derive|solve|work|check|compute)\b|"
    r"\bconfidence\b[^.]{0,30}\b(?:low|zero|none|minimal)\b|"
    r"\bwithout\s+(?:any\s+)?(?:real\s+)?(?:work|derivation|justification)\b|\bzero\s+real\s+work\b|"
    r"\bnot\s+(?:actually\s+)?derived\b|\bunverified\s+guess\b|\bpulled\b[^.]{0,20}\b(?:air|hat)\b|"
    # the problem changed before it is solved
    r"\b(?:take|treat|read|consider|imagine|solve)\s+the\s+(?:problem|question)\s+as\s+(?:if|though)\b|"
    r"\bswap(?:ping)?\s+the\s+roles\b|\bthe\s+picture\s+changes\b|\bwhat\s+if\s+the\s+(?:problem|question)\b|"
    r"\bredo(?:ing)?\s+the\s+(?:computation|calculation|problem)\s+(?:with|as\s+if|under)\b|"
    r"\breading\s+[\"'\u2018\u201c][^\"'\u2019\u201d]{1,30}[\"'\u2019\u201d]\s+as\b|"
    r"\b(?:change|alter|modify|tweak)(?:d|s|ing)?\s+the\s+(?:problem|question|data|numbers|givens)\b|"
    r"\bpretend(?:ing)?\b(?:\s+for\s+a\s+(?:moment|second|minute))?\s+(?:that\s+)?|"
    r"\b(?:drop|ignore|skip|remove|delete|omit)(?:s|ped|ping|d)?\s+the\s+(?:\w+\s+){0,2}(?:sentence|condition|constraint|"
    r"clause|part|line|detail)\s+of\s+the\s+(?:problem|question)\b|"
    r"\b(?:numbers|values|data)\s+from\s+(?:the\s+)?(?:previous|another|a\s+different|the\s+last|an?\s+other)\s+"
    r"(?:exercise|problem|question|example)\b|"
    r"\boff\s+the\s+top\s+of\s+(?:my|one's|the)\s+head\b|\bhalf-?remembered\b|\bfrom\s+(?:vague\s+)?memory\b|"
    r"\bwithout\s+(?:checking|working|computing|calculating)\b|\bpending\s+(?:a|the|my|further)\b|"
    # a scale set for the whole reply, or a changed problem
    r"\b(?:all|every|each)\s+(?:the\s+)?(?:quantit\w+|figures?|numbers?|values?|amounts?)\b[^.]{0,40}?\b(?:in|as)\s+"
    r"(?:tens|hundreds|thousands|millions|billions|dozens|scores|gross|pairs|halves|units\s+of)\b|"
    r"\b(?:measuring|expressing|counting|writing|giving|reporting)\s+(?:everything|all\s+\w+)\s+in\s+(?:tens|hundreds|"
    r"thousands|millions|billions|dozens|scores|gross|pairs|halves)\b|"
    r"\bthe\s+variant\s+(?:where|in\s+which|with)\b|\b(?:replaced|swapped|substituted)\s+(?:by|with|for)\s+\d|"
    r"\bdropping\s+the\s+\w+\s+(?:altogether|entirely)\b|\bsimplify\s+the\s+(?:setup|problem)\s+by\b|"
    r"\b(?:last\s+year's|warm-?up|simpler|easier|modified|altered|changed)\s+(?:version|variant)\b",
    re.IGNORECASE,
)
"""Words that disown the whole answer, read anywhere in the text before the box's sentence (a heading ``## A shot
in the dark``, ``Disclaimer: everything below is invented.``, ``I had no time to derive this.``)."""
_TITLE_LINE: Final = re.compile(r"\A\s*#[ \t]+(?!step\s*\d)(?P<title>[^\n]+)$", re.MULTILINE | re.IGNORECASE)
"""The reply's first line, when it is a top-level heading (``# ...``) and no step of the working (``# Step 1: ...``)."""
_TITLE_WORDS: Final = frozenset(re.findall(r"\S+", """
    a all above an analysis analyze analyzing and answer approach arithmetic asked asks at break breaking brief by
    calculate calculating calculation calculations case cases check checking combine combining complete computation
    compute computed computing conclusion count counting data define defining definitions derivation derive deriving
    detailed details down equation equations explanation expression final find finding for formal full given
    here how idea ideas identify identifying in information insight is it its key known let's main math
    mathematical method my notes observation observations of on our overview part plan problem problem's proof
    putting question quick reasoning recap remarks response result results set setting setup short simplify
    simplifying solution solve solving step step-by-step steps strategy summary the to together understand
    understanding unknown unknowns value values variables verification verify walkthrough we what with work worked
    working
"""))
"""Words of a heading that only names a part of a solution (``## Step 2: Set up the equation``, ``### Final
Answer``, ``# Solution``)."""


def _unplain_title(above: str) -> str | None:
    """The reply's title (a top-level heading on its first line), when it says more than a section name or the
    question's own words (``# Layout mock-up (figures are dummies)``, ``# Illustrative numbers only``): a title over
    the whole reply may say what the reply is, which no list of disclaimers can hold. ``None`` when it is plain,
    there is none, or the question is unknown."""
    asked = question_words()
    heading = _TITLE_LINE.search(above)
    if asked is None or heading is None:
        return None
    words = re.findall(r"[^\W\d_]+(?:['\u2019-][^\W\d_]+)*", _prose_only(heading.group("title")).lower())
    unplain = [word for word in words if word not in _TITLE_WORDS and singular(word) not in asked]
    return heading.group("title") if unplain else None


_DISOWNING_LEAD: Final = re.compile(
    r"\bparrot\w*|\bscribbl\w*|\bvibes?\b|\bfreewheel\w*|\bscaffold\w*|\bstop-?gap\b|\bsight\s+unseen\b|"
    r"\bblindly\b|\bwing(?:ing|ed)\s+it\b|\bthrow-?away\b|\b(?:from|out\s+of)\s+(?:thin\s+)?air\b|"
    r"\b(?:derivation|working|work|algebra|steps?|proof)\s+(?:was\s+|were\s+)?skipped\b|"
    r"\bskip(?:ping|ped)?\s+the\s+(?:derivation|working|work|algebra|steps?|proof)\b|"
    r"\bcopy(?:ing)?\s+(?:from\s+)?(?:my|a|the)\s+(?:neighbou?r|classmate|friend)|"
    r"\bbefore\s+(?:any\s+of\s+)?(?:this|it|the\s+work)\s+(?:is|has\s+been|gets)\s+(?:double-?)?checked\b|"
    r"\bto\s+fill\s+(?:the|a|this)\s+(?:slot|space|blank|gap)\b|\bfor\s+the\s+next\s+draft\b|"
    r"\bout\s+of\s+a\s+hat\b|\bmagic\s+8-?ball\b|\bfrom\s+the\s+ether\b|\bdecoy\b|\bplucking\b|\bdartboard\b|"
    r"\bzero\s+(?:working|work|effort|justification|derivation)\b|\bcourtesy\s+of\b|\bcribbed\b|\bechoing\b|"
    r"\bsay-?so\b|\bcheat\s*sheet\b|\b(?:lifted|borrowed|copied|taken)\s+from\b|"
    r"\b(?:per|via)\s+(?:my|the|a|our|his|her|their)\s+(?:\w+\s+)?(?:tutor|friend|classmate|teacher|partner|sheet|"
    r"notes?|book|key|source|calculator|chatbot|assistant)\b",
    re.IGNORECASE,
)
"""Leads of the box's own sentence that disown it in words no list of denials holds (``Going purely on vibes,``,
``As a stopgap until I redo the fractions,``): read in that sentence only, where they govern the box; above it the
same words may be about something else."""
_DENYING_BEFORE: Final = re.compile(
    r"(?:\bnot|n't|\bnever)\s+(?:\w+\s+){0,2}?(?:the\s+|my\s+|our\s+)?(?:final\s+)?(?:answer|it|right|correct|sure|"
    r"certain|confident)\b|^\W*not\b|^\W*no\W*$|\w*(?:wrong|incorrect|mistak|erroneous)\w*|"
    r"\b(?:an?|the|my|our|some)\s+error\b|\binvalid\b|\bplaceholder\b|\bdraft\b|\btbd\b|"
    r"(?<!if\sand\s)\bonly\s+(?:if|when|for)\b|\bunless\b|"
    r"\b(?:half|twice|double|a\s+third|a\s+quarter)\s+(?:of\s+)?(?:the|my|our)\s+(?:answer|result|value)\b|"
    r"\bto\s+get\s+the\s+(?:final\s+)?(?:answer|result)\b|\bfail\w*|\bflaw\w*|\bbug\b|\bbad\b|\bfault\w*|"
    r"\bunclear\b|\boff\s+by\b|\bdiscard\w*|\bcounterexample|\bdouble[- ]count\w*|\bworst\s+case|\bnear\b|"
    r"\bsquare\s+root\s+of\s+(?:this|that|it)\b|\bnone\s+of\b|\bnot\s+this\b|\b(?:cannot|can't)\s+be\b|"
    r"^\W*(?:this|that|it)\s+(?:does\s+not|doesn't)\s+(?:satisfy|work|hold|check)|\bmessed\s+up\b|\bbogus\b|"
    r"\bfalse\s+(?:answer|result)\b|\bsomething\s+is\s+off\b|\bnot\s+what\b|\brandom\s+(?:pick|guess|choice)\b|"
    r"\b(?:picked|chosen|guessed)\s+(?:at\s+)?random|\bran\s+out\s+of\b|"
    r"\bg[ai]ve\s+up\b|\bwrite\s+something\b|\bfar\s+from\s+(?:certain|sure)\b|" + _DISCLAIMING,
    re.IGNORECASE,
)
"""Words that deny, bound or condition what follows, read in the sentence right before the box's."""
_ANSWER_GIVEN: Final = re.compile(
    r"\b(?:final\s+)?answers?\b[^.!?\n]{0,24}?(?::|=|\b(?:is|was|would\s+be|equals?)\b)\s*(?P<value>[-+\u2212$\\\d].*)",
    re.IGNORECASE | re.DOTALL,
)


def _denies_what_follows(raw: str, prose: str, answer: str, corrects: bool = False) -> bool:
    """Whether the sentence right before the box's denies the answer itself, bounds or conditions it, or gives
    another answer (:func:`_framing_sentence`); an admitted mistake does not when the box's sentence corrects it."""
    denial = _DENYING_BEFORE.search(prose)
    if corrects and denial is not None and re.fullmatch(r"\w*(?:mistak|error|wrong|incorrect)\w*", denial.group()):
        denial = None
    if denial or _REJECTING_MARKS.search(raw) or "~~" in raw or _FOREIGN_DOUBT.search(prose):
        return True
    if re.search(r"\b(?:or|nor|either|otherwise)\W*\Z", raw, re.IGNORECASE):
        return True  # "Either 43 or" over the box: the box is one of two
    given = _ANSWER_GIVEN.search(raw)
    if given is not None and not _restates(given.group("value"), _bare_text(answer)):
        return True
    short = len(_STRONG_EMPHASIS.sub(" ", prose).split()) <= _FRAGMENT_WORDS + 1  # "**" is not a word
    if _CONSEQUENCE_STATED.search(raw):  # "Thus, if $a = 2,$ then $b = 8.$": a finished conditional, not a fragment
        prose = re.sub(r"\bif\b", " ", prose, count=1, flags=re.IGNORECASE)
    return short and bool(_FRAGMENT_HEDGE.search(prose) or _FRAGMENT_BEFORE.search(prose))


_CONSEQUENCE_STATED: Final = re.compile(
    r"\bif\b.*\bthen\s*(?:\*\*|__)?\s*(?:\$+|\\[(\[])[^$]*?=", re.IGNORECASE | re.DOTALL)
"""An ``if`` whose ``then`` is followed by an equation: the conditional states its own consequence."""


_FRAGMENT_BEFORE: Final = re.compile(
    r"\b(?:modulo|mod|base|bound|estimat\w*|approx\w*|close|possibl\w*|rounded|guess|maybe|probably|perhaps|likely|"
    r"unsure|uncertain|assum\w*|suppos\w*|hypothet\w*|bogus|false|messed|off|if|unless|about|around|roughly|nearly|"
    r"almost|at\s+(?:least|most))\b", re.IGNORECASE)
"""A fragment right before the box that bounds or qualifies it (``Modulo 1000.``, ``In base 8.``, ``Close to``)."""


_MATH_OPENED: Final = re.compile(r"(?:\$\$?|\\[(\[]).*\Z", re.DOTALL)


def _prose_only(sentence: str) -> str:
    """``sentence`` without its formulas (closed ones, the one the box itself stands in, and other
    boxes): ``3 + 2 =`` before a box is a computation, read by the grader's context rules, not prose,
    and ``\\boxed{42} \\boxed{42}`` repeats the answer without saying a word."""
    for start, _, _, end in reversed(top_level_box_spans(sentence)):
        sentence = sentence[:start] + " " + sentence[end:]
    return _MATH_OPENED.sub(" ", MATH_SEGMENT.sub(" ", sentence))


def _interjected_aside(clauses: list[str]) -> bool:
    """Whether an aside set off by commas between the subject and its verb qualifies the box (``The answer,
    IIRC, is``, ``The total, off the top of my head, is``): when the box's clause is the verb alone, the aside
    before it must only announce (``The answer, therefore, is``) or say where the value came from (``as computed
    above``)."""
    said = [clause.strip(" *_") for clause in clauses if clause.strip(" *_#>")]
    if len(said) < 3 or not all(word.lower() in _COPULAS for word in said[-1].split()):
        return False
    aside = said[-2]
    return not (_only_announces(aside) or _PLAIN_ASIDE.fullmatch(aside))


def _parenthetical_aside(prose: str) -> bool:
    """Whether a parenthesis before the box says more than an announcement (``The final answer (I'd wager)
    is``); ``(answer box)`` and ``(as computed above)`` do not."""
    return any(not (_only_announces(aside) or _PLAIN_ASIDE.fullmatch(aside.strip()))
               for aside in re.findall(r"\(([^()]*[A-Za-z][^()]*)\)", prose))


_PLAIN_ASIDE: Final = re.compile(
    r"(?:of\s+course|then|again|indeed|clearly|finally|as\s+(?:expected|required|claimed|computed|shown|found|"
    r"derived|calculated|established)(?:\s+(?:above|before|earlier))?|as\s+(?:above|before)|once\s+again|in\s+short)",
    re.IGNORECASE)


def _only_announces(clause: str) -> bool:
    """Whether ``clause`` only announces the box after it: every word is in :data:`_ANNOUNCING` or a
    one-letter name (``x =``), or a short subject is followed by a verb from :data:`_COPULAS` right
    before the box (``the product is``, ``Janet makes``). Markdown emphasis is ignored."""
    for pattern, joined in _JOINED_PHRASES:
        clause = pattern.sub(joined, clause)
    if "?" in clause or "~~" in clause or _SCARE_QUOTES.search(clause):
        return False  # "Answer?: \boxed{42}" asks, "~~Final Answer~~" is struck out, "the \"answer\"" is so-called
    words = re.findall(r"[^\s*_~`#>]+(?:_[a-z]+)*", clause.replace("**", " "))
    bare = [word.lower().strip(".!?\"'()[]") for word in words]
    if all(word in _ANNOUNCING or word in _COMPUTING or (len(word) == 1 and word.isalpha()) for word in bare):
        return names_what_is_asked(word for word in bare if word in _QUANTITY_ANNOUNCED)
    if any(_ANSWER_NOUN.fullmatch(word) for word in bare):
        # A subject that names the answer says which answer it means: only announcing words may qualify it
        # ("the correct answer to the problem is"), never "the naive answer", "the answer in base 8",
        # "the square of the answer", "Alice says the answer", "for n = 3 the answer".
        return all(word in _ANNOUNCING or word in _ANSWER_QUALIFIERS or (len(word) == 1 and word.isalpha())
                   for word in bare)
    # "the area is", "Janet makes": with the question known, the subject must name what it asks ("Its cube is"
    # and "The perimeter is" state the value of another quantity when the question asks for N or the area).
    return ((bare[-1] in _COPULAS or verb_asked(bare[-1])) and len(bare) <= _SUBJECT_WORDS + 1
            and names_what_is_asked(bare[:-1]) and not any(word in _ANOTHER_SETTING for word in bare[:-1])
            and not counts_another_thing(bare[:-1]) and not names_something_else(bare[:-1])
            and not _another_source(bare[:-1]))


def _another_source(words: list[str]) -> bool:
    """Whether a subject names a source other than the reply (:data:`_ANOTHER_SOURCE`) the question does not."""
    asked = question_words()
    return any(word in _ANOTHER_SOURCE and (asked is None or singular(word) not in asked) for word in words)


_ANOTHER_SOURCE: Final = frozenset({
    "partner", "friend", "classmate", "tutor", "teacher", "chatgpt", "gpt", "claude", "gemini", "llm", "calculator",
    "textbook", "website", "google", "wolfram", "internet", "forum", "someone", "somebody", "reddit", "chatbot",
    "assistant", "sibling", "brother", "sister", "mom", "dad",
})
"""Words of a subject that make it another source's answer (``My study partner got``, ``ChatGPT came up with``),
unless the question speaks of them (``How many books does the teacher have?``)."""
_ANOTHER_SETTING: Final = frozenset({
    "case", "version", "instance", "example", "analogue", "analog", "variant", "scenario", "draft", "attempt",
    "trial", "sample", "test", "miniature", "toy",
})
"""Words of a subject that name another setting than the problem's (``That case gives``, ``The toy version has``):
its box is that setting's value."""


_COMPUTING: Final = frozenset({
    "compute", "computes", "computed", "computing", "computation", "calculate", "calculates", "calculated",
    "calculating", "calculation", "evaluate", "evaluates", "evaluated", "evaluating", "evaluation", "multiply",
    "multiplying", "multiplied", "multiplication", "add", "adding", "addition", "subtract", "subtracting",
    "subtraction", "divide", "dividing", "division", "simplify", "simplifying", "simplified", "simplification",
    "substitute", "substituting", "substitution", "plug", "plugging", "plugging_in", "expand", "expanding",
    "combine", "combining", "arithmetic", "working", "directly", "explicitly", "carefully", "step", "by", "let's",
    "let", "us", "out", "everything", "together", "numbers", "in", "through", "algebra", "carrying", "carry",
    "putting", "pieces", "doing", "program", "code", "script", "output", "confirms", "confirmed", "verifies",
    "verified",
})
"""Words that say the box is computed (``We compute directly: $99^2+99+1 = \\boxed{9901}$``, ``Multiplying, $6
\\times 7 = \\boxed{42}$``, ``Plugging in:``): they announce it as :data:`_ANNOUNCING`'s do. No word here
estimates, rounds or supposes; those are read by the lists of hedges and denials, whatever the clause."""
def _concluded_from_its_value(sentence: str, answer: str) -> bool:
    """Whether the box follows a conclusion word right away (``..., so \\boxed{12}``) and the reason before that
    word states the box's value as a result (``There are $4!/2 = 12$ arrangements``, ``the count is 12``): the word
    then announces the box, as ``Thus, \\boxed{12}`` does. A reason that does not state the value (``Random pick,
    so``) is still read as the clause that says something."""
    found = list(re.finditer(_CONCLUDING_WORDS, sentence, re.IGNORECASE))
    if not found or _prose_only(sentence[found[-1].end() :]).strip(" ,*_"):
        return False
    reason = _bare_text(sentence[: found[-1].start()])
    value = re.escape(DIGIT_GROUP_COMMA.sub("", _bare_text(answer)))
    stated = r"(?:=|\\approx|(?:is|are|was|were|equals|gives|makes?|totals?|get|got)(?=\d))"
    return bool(value) and re.search(stated + value + r"(?![\d.])", DIGIT_GROUP_COMMA.sub("", reason)) is not None


_QUANTITY_ANNOUNCED: Final = frozenset({"sum"})
"""Words of :data:`_ANNOUNCING` that name a quantity of their own (``The sum is`` when the product was asked)."""


def _formula_asked(spoken: str, sentence: str) -> bool:
    """Whether the formula the box closes names what the question asks (``So $2k = \\boxed{36}$`` does not, asked
    for k); a prose subject that shares a word with the question names it (``the distance between the foci is
    $2c =$``)."""
    return subject_named_in_question(re.findall(r"[^\s*_~`#>]+", spoken)) or formula_names_what_is_asked(sentence)


_ANSWER_NOUN: Final = re.compile(r"answer(?:s|'s|\u2019s)?")
_SCARE_QUOTES: Final = re.compile(
    r"(?<!\w)[\"\u201c\u201d\u2018\u2019'`]+\s*[A-Za-z][\w\s-]{0,30}?[\"\u201c\u201d\u2018\u2019'`]+(?!\w)")
"""Quotation marks around a word of the announcement (``the "answer" is``): a so-called answer, not the answer."""
_ANSWER_QUALIFIERS: Final = frozenset({
    "correct", "right", "exact", "true", "actual", "real", "precise", "numerical", "numeric", "requested", "required",
    "box",
    "desired", "to", "for", "problem",
    "question", "this", "these", "your", "problem's", "question's", "must", "conclude", "concludes", "deduce",
    "see", "indeed", "clearly", "finally", "follows", "brings", "brought", "i'm", "am", "confident", "certain",
    "short",
})
"""Words besides :data:`_ANNOUNCING` that may qualify the answer in the subject before a final box."""


_LATER_CLAUSE_HEDGE: Final = re.compile(
    r"\b(?:but|yet|though|although|probabl\w*|theor\w*|thereabouts|give\s+or\s+take|kidding|jk|before|until|"
    r"ish|or\s+so|roughly|approximately|about|around|nearly|almost|sort\s+of|kind\s+of|etc|among|others|"
    r"and\s+so\s+on|so\s+forth|e\.g|for\s+example|for\s+instance|only|in\s+the\s+case|halved|doubled|tripled|"
    r"squared|cubed|close\s+to\s+it|at\s+best|at\s+worst|within|as\s+long\s+as|provided|"
    r"assuming|unless|alternatively|in\s+units\s+of|opinion|neighbou?r\w*|mostly|partly|largely|somewhat)\b",
    re.IGNORECASE,
)
"""Words in a clause after a final box's comma that leave the answer open or hedge it (``\\boxed{42}, but it is
43``, ``\\boxed{42}, probably``, ``\\boxed{42}, give or take one``, ``\\boxed{42}, or thereabouts``)."""
_RENAMING: Final = re.compile(
    r"[,;]\s*(?:(?:or|and)\s+)?(?:namely|aka|a\.k\.a\.?|equivalently|i\.\s?e\.?,?|that\s+is,?|in\s+other\s+words,?|"
    r"which\s+is|which\s+equals|so|or)\s+(?P<value>.+)",
    re.IGNORECASE | re.DOTALL,
)


def _renames_another_value(later: str, answer: str) -> bool:
    """Whether the clause after a box's comma gives the box another name that holds a number the box does not
    (``\\boxed{42}, namely 43``, ``\\boxed{42}, or equivalently 43``, ``\\boxed{42}, i.e. 43``): the reader
    meets two values and no single answer. ``\\boxed{42}, i.e. 42 dollars`` restates it."""
    match = _RENAMING.match(later)
    if match is None:
        return False
    value = match.group("value")
    return bool(re.search(r"\d", value)) and not _restates(value, _bare_text(answer))


_VALUE_AFTER_BREAK: Final = re.compile(r"[,;\u2014]\s*(?:(?:or|and)\s+)?(?:[-+\u2212]?\s*\d|\\[A-Za-z])", re.IGNORECASE)
_WORD: Final = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}")
_ABBREVIATION_AFTER_BREAK: Final = re.compile(r"[,;]\s*(?:i\.\s?e\.|e\.\s?g\.|viz\.)", re.IGNORECASE)


def _continues_with_a_value(later: str) -> bool:
    """Whether the clause after a box's comma or semicolon is another value (``\\boxed{42}, 43``,
    ``\\boxed{2}; x + 1``, ``\\boxed{42}, or 41``): the box is one item of a list, so the list is the
    answer. A clause of words (``, which checks out``) is not."""
    if later[:1] not in ",;\u2014" or _ABBREVIATION_AFTER_BREAK.match(later):
        return False  # ", i.e. ..." renames the box (:func:`_renames_another_value`)
    return bool(_VALUE_AFTER_BREAK.match(later)) or not _WORD.search(later)


def _table_cells_before(sentence: str) -> str | None:
    """When the box stands in a Markdown table row (``| 2 | **Final answer** | $\\boxed{42}$ |``), the row's
    cells before it as one sentence, the cell just before the box's as the label of its clause (``2; **Final
    answer**: ``); else ``None``. Every cell is still read: a step number passes, a hedge does not."""
    line = sentence[sentence.rfind("\n") + 1 :]
    if not line.lstrip().startswith("|") or line.count("|") < 2:
        return None
    *earlier, label, own = line.strip().lstrip("|").split("|")
    label = label.strip()
    if label and (re.search(r"[$\\]", label) or not re.search(r"[^\W\d_]", label)):
        label = f"({label.replace('$', ' ').strip()})"  # a formula or a sign for a label is read with the box
    return "; ".join(cell.strip() for cell in earlier) + ("; " if earlier else "") + label.strip() + ": " + own


def _label_line_above(text: str, line_start: int) -> tuple[str, int]:
    """The line above ``line_start`` when it labels the box on a line of its own, to be read as the box's
    label, and where that line starts: a line that ends with a colon (``Lower bound:``), a Markdown heading
    (``### Draft``, or a line underlined with ``===`` or ``---``) or a line all in bold (``**Final Answer**``),
    blank lines between allowed; else nothing, and ``line_start``."""
    floor = max(0, line_start - CONTEXT_WINDOW)
    above = text[floor:line_start].rstrip()
    while _EMPTY_QUOTE_LINE.search(above):  # "> **Final answer**\n>\n> $\boxed{5}$": a blank line of the quote
        above = _EMPTY_QUOTE_LINE.sub("", above).rstrip()
    start = above.rfind("\n") + 1
    line = _LINE_MARKER.sub("", above[start:])
    if _UNDERLINE.fullmatch(line) and start > 0:  # a setext heading: the line above the underline names it
        above = above[: start - 1].rstrip()
        start = above.rfind("\n") + 1
        return above[start:].strip() + ": ", floor + start
    if line.endswith(":"):
        return line + " ", floor + start
    if _HEADING_OR_BOLD_LINE.fullmatch(line):
        return line.strip().rstrip("*_#").strip() + ": ", floor + start
    return "", line_start


_UNDERLINE: Final = re.compile(r"\s*(?:=+|-{3,})\s*")
_EMPTY_QUOTE_LINE: Final = re.compile(r"\n[ \t]*>[\s>]*\Z")


_HEADING_OR_BOLD_LINE: Final = re.compile(
    r"\s*(?:#{1,6}\s+[^\n]*\S|(?:~~)?(?:\*\*|__)[^*_\n]*[^\s.!*_](?:\*\*|__)(?:~~)?)\s*")


def _label_before_colon(prose: str) -> str | None:
    """The label a colon sets before the box's clause (``Lower bound: \\boxed{42}``), if the last
    clause break before the box is a colon; it must announce the answer as the clause itself must."""
    breaks = list(_CLAUSE_BREAK.finditer(prose))
    if not breaks or breaks[-1].group() != ":":
        return None
    start = breaks[-2].end() if len(breaks) > 1 else 0
    label = prose[start : breaks[-1].start()]
    return label if label.strip(" *#_") else None


_TAKING_BACK: Final = re.compile(
    r"\b(?:wait|actually|correction|edit|edited|oops|sorry|hmm+|instead|however|unsure|uncertain|maybe|perhaps|"
    r"probably|typo|kidding|jk|j/k|nope|nah|take\s+it\s+back|took\s+it\s+back|redo|redid|hold\s+on|then\s+again|"
    r"second\s+thoughts?|amend\w*|erratum|errata|(?:low|little|no|not(?:\s+\w+)?)\s+confiden\w*|unconfiden\w*|"
    r"(?:could|might|may)\s+(?:also\s+|well\s+|instead\s+|just\s+as\s+well\s+)?be|"
    r"\w*(?:wrong|incorrect|mistak|error|erroneous|false|untrue|invalid|reconsider|retract|doubt|guess|contradict|"
    r"revis|updat|overestimat|underestimat)\w*|too\s+(?:large|small|big|high|low|many|few)|off\s+by|"
    r"fails?\s+(?:for|when|if|at)|ignores?\s+the|unverified|unconfirmed|misread\w*|bug|todo|to\s+be\s+continued|"
    r"needs?\s+(?:more\s+work|recheck\w*|checking|verification|review\w*|to\s+be\s+(?:checked|verified|reviewed))|"
    r"not\s+the\s+(?:number|value|quantity|count|sum|total|answer|same)\s+of|bogus|hundreds|thousands|millions|"
    r"billions|recheck\s+needed|no\s+idea|who\s+knows|wishful|"
    r"ballpark|for\s+now|or\s+so\s+it\s+seems|verification\s+failed|flawed|sarcas\w*|in\s+my\s+dreams|no\s+way|"
    r"trap|naive|hop(?:e|es|ed|ing|efully)|double[- ]?count\w*|over-?count\w*|under-?count\w*|twice|forg[eo]t\w*|"
    r"plus\s+(?:one|the|a|an)|"
    r"mod(?:ulo)?|remains?|(?:still|yet)\s+(?:has|have|needs?|to)|placeholder|tbd|draft|fixme|work\s+in\s+progress|"
    r"pending|subject\s+to\s+change|random|randomly\s+(?:generated|guessed|picked)|"
    r"(?:generated|guessed|picked)\s+(?:at\s+)?random(?:ly)?|coin\s+(?:flip|toss)|50\s*/\s*50|fifty[- ]fifty|"
    r"toss[- ]?up|"
    r"(?:lower|upper|rough|crude|loose|conservative)\s+(?:estimate|bound|guess|approximation)|shot\s+in\s+the\s+dark|confidence\W*low|"
    r"(?:could|can)\s*(?:not|n't)\s+(?:verify|check|confirm|prove)|g[ai]ve\s+up|stuck|ran\s+out|incomplete|flaw\w*|"
    r"gaps?|circular|fail(?:s|ed|ure)?|part\s+[a-d]|only\s+(?:for|when|if|holds?|applies)|assum\w*|"
    r"last\s+\w+\s+digits?|in\s+(?:thousands|millions|billions|hundreds|tens)|convert\w*|"
    r"questions?\s+(?:wants?|asks?|asked|requires?)|square\s+of|"
    r"(?:gives|yields|gets?)\s+the\s+(?:final|actual|true|real|correct|required)\s+\w+|(?:so\s+)?i\s+thought|"
    r"li(?:e|ed|es)|lying|let\s+me\s+re(?:compute|count|calculate|do|think|consider|check)\w*|hang\s+on|"
    r"plus\s+or\s+minus|give\s+or\s+take|up\s+to\s+(?:a\s+)?(?:sign|constant|factor|permutation|rotation)|"
    r"unchecked|to\s+be\s+(?:confirmed|checked|verified|determined|decided)|one\s+(?:more|less|fewer)|replac\w*|"
    r"read\s+\S+\s+for|and\s+up|miss(?:ed|ing)|half\s+(?:that|this|it|of\s+(?:that|this|it))|"
    r"yeah\s+right|as\s+if|sure\s+thing|no\s+(?:real\s+)?(?:solutions?|answers?|such)|(?:does\s+not|doesn't|cannot|can't)\s+exist|"
    r"(?:is|are|exists?)\s+(?:also\s+)?(?:a\s+)?(?:second|another|other)\s+(?:solution|root|answer|value)s?|"
    r"(?<!exactly\s)(?<!only\s)\bone\s+(?:of\s+the\s+)?(?:solutions|answers|roots|values)|"
    r"(?<!exactly\s)(?<!only\s)one\s+(?:solution|root)\b(?!\s+(?:method|approach|way))|not\s+unique|too\s+works|"
    r"works\s+too|also\s+works|only\s+in\b|for\s+[^.]{1,30}\s+only|left\s+out|omit\w*|skipp\w*|"
    r"duplicate\w*|counterexample\w*|breaks\s+it|disagrees?|intermediate|hex(?:adecimal)?|octal|binary|"
    # the problem has no answer; a reconsidered or switched choice; an idiom that disowns the answer
    r"inconsisten\w*|ill[- ]posed|unsatisfiable|cannot\s+(?:all\s+|both\s+)?(?:hold|be\s+(?:met|satisfied|true))|"
    r"nothing\s+satisf\w*|on\s+second\s+(?:look|glance|reading|inspection)|switch\w*|on\s+reflection|"
    r"(?:setup|configuration|problem|question|situation|scenario|task|premises?|data|system|conditions?|hypothes[ie]s)"
    r"\s+(?:is|are)\s+(?:\w+\s+)?(?:impossible|contradictory|unsolvable|ill[- ]defined|incompatible)|"
    r"no\s+well[- ]defined|unsolvable|incompatible|"
    r"i'?d\s+(?:rather\s+)?(?:pick|choose|go\s+with)|overconfident|said\s+the|"
    r"(?:should|must|needs?\s+to|has\s+to|have\s+to)\s+(?:still\s+)?(?:be\s+)?(?:excluded|removed|subtracted|added|"
    r"included|deducted|discounted|divided|halved|doubled|adjusted)|"
    r"(?:option|choice)\s+\(?[A-Ea-e]\)?\s+(?:is|was)\s+(?:right|correct|the\s+answer)|"
    r"grain\s+of\s+salt|don'?t\s+quote\s+me|not\s+final|"
    r"(?:different|other|another|some\s+other)\s+(?:problem|question|version|variant|exercise|setting)|"
    r"parallel\s+universe|alternate\s+(?:universe|reality)|alternatively|far\s+from\s+(?:certain|sure|confident)|"
    r"please\s+(?:verify|check|confirm)|low\s+faith|random\s+pick)\b"
    r"|^\W*\(?[A-E]\)?\s+is\s+the\s+(?:one|right|correct|answer)\b"
    # an adjustment still to make: "Remember to subtract the empty set.", "Exclude the trivial solution."
    r"|^\W*(?:remember|don'?t\s+forget|be\s+sure|make\s+sure)\s+to\s+(?:add|include)\b"
    r"|^\W*(?:(?:remember|don'?t\s+forget|be\s+sure|make\s+sure)\s+to\s+)?(?:subtract|exclude|divide\s+out|"
    r"discount|remove|deduct|drop|halve|double(?![- ]?check)|multiply|divide|add\s+back|account\s+for|adjust|"
    r"correct\s+for)\b"
    r"|^[\s(\[]*[-+\u2212]\s*\d|^\W*minus\b|\bpart\s+\([a-z]\)|^\W*(?:check|verify)(?!\w)(?!\s*(?::|that|by))",
    re.IGNORECASE,
)
"""Words that take a stated answer back or leave it open, looked for in the sentences after the
final box (``\\boxed{42}. Wait, that's wrong.``, ``Correction: 43.``). Negations are read by
:data:`_NEGATING_THE_ANSWER`: ``There are no other solutions`` confirms the box."""
_NEGATING_THE_ANSWER: Final = re.compile(
    r"^\W*(?:no|nope|nah|rather|scratch|disregard|ignore|rejected)\b(?!\s+(?:other|more|further|need|one)\b)"
    r"|^\W*not\b(?!\s+(?:only|hard|difficult|surprisingly|coincidentally)\b)|\bnot\W*$"
    r"|^\W*never\s*mind\b(?!\s+(?:the|a|an)\s)"
    r"|\b(?:ignore|disregard|scratch|forget|strike)\s+(?:that|this|it|everything|all|what|my|"
    r"the\s+(?:above|answer|result|value|boxed|final|box))\b|\bno\W*$"
    r"|(?:\bnot|n't|\bnever|\bno\s+longer)\s+(?:(?:be|quite|entirely|completely|really|seem|seems|to|the|a|an|my|"
    r"our|at\s+all)\s+){0,2}(?:right|correct|true|valid|sure|certain|confident|accurate|it|answer|case|result|"
    r"solution|quite|exactly|final|so|that|work|works|hold|holds|match|matches|check|checks|satisfy|satisfies|agree|"
    r"agrees|add|adds|make\s+sense|possible|trust|bet|rely|vouch|stand\s+by|believe|think\s+so|verified|checked|"
    r"confirmed|tested|whole|what|done|finished|[-+\u2212]?\$?\d)"
    r"|\b(?:answers?|results?|solutions?|values?)\b[^.!?]{0,24}?(?:\bnot\b|n't\b|\bnever\b)"
    r"|\b(?:this|that|it|the\s+(?:answer|result|solution|boxed\s+value))(?:\s+(?:value|number|answer|result|"
    r"solution))?\s+(?:is|was|has\s+been|must\s+be|should\s+be)\s+(?:\w+\s+)?(?:rejected|discarded|excluded|"
    r"extraneous|dismissed|thrown\s+out|different|something\s+else)\b"
    r"|\b(?:reject|discard|exclude|dismiss)\w*\s+(?:this|that|it|the\s+(?:boxed|above|answer|result|value))\b"
    r"|\b(?:answers?|results?|solutions?)\b[^.!?]{0,24}?\b(?:differs?|different|else)\b"
    r"|^\W*(?:if|unless|assuming|provided|supposing|only\s+if|as\s+long\s+as|halve|double(?!-?\s?check)|triple|divide|multiply|"
    r"subtract|negate|square)\b"
    r"|\b(?:should|must|need\s+to|have\s+to)\s+(?:divide|multiply|halve|double|subtract|add|take|square|negate)\b"
    r"|^\W*(?:this|that|it|the\s+above|above|the\s+(?:boxed\s+)?(?:answer|value|result|number|root|solution)|"
    r"this\s+(?:root|value|answer|number|result|solution))\s*(?:'s|\u2019s|\s+is|\s+was)\s+(?:(?:only|just|merely|"
    r"my|our|the|a|an|what)\s+)*(?:extraneous|approximate|tentative|preliminary|rounded|rough|naive|previous|"
    r"initial|earlier|original|old|first|twice|half|double|placeholder|(?:upper|lower)\s+bound|bound|estimate|"
    r"approximation|guess|attempt|draft|the\s+textbook|the\s+key|(?:the|my|a|his|her|their)\s+\w+\s+"
    r"(?:says?|said|got|gets|claims?|thinks?|gave))\b"
    r"|\b(?:according\s+to|so\s+says|says\s+the|answer\s+key|textbook|my\s+friend)\b"
    r"|^\W*(?:except|without|excluding|barring)\b"
    r"|^\W*(?:now|next|then|finally)\b[^.!?]*\b(?:multiply|divide|add|subtract|take|exclude|remove|square|halve|"
    r"double|negate)\b|\bto\s+get\s+the\s+(?:final\s+)?(?:answer|result)\b|n't\W*$|^\W*add\b|"
    r"n't\s+(?:to|for)\s+me\b",
    re.IGNORECASE,
)
"""A negation that denies the answer after the final box: ``No.``, ``Not quite.``, ``That's not right.``,
``It isn't 42.``, ``I'm not sure.``, ``This doesn't work.``, ``The answer is not 42.``; one about something else
(``There are no other solutions``, ``It is not hard to check``, ``We don't need the other case``) is not."""
_REJECTING_MARKS: Final = re.compile("[\u2717\u2718\u274c\u274e\u2612\u26d4\U0001f6ab\U0001f44e\u21af]")
"""Marks that reject what they stand by (``\u2717``, ``\u274c``, ``\U0001f44e``...), in a sentence after the final box
(``Correct: \u2717``); in the box's own sentence they are read with the answer and unreadable already. Markdown's
strikethrough (``~~correct~~``) in a later sentence withdraws what it marks, and takes the answer back too."""
_UNCHECKED_BOX: Final = re.compile(r"\[\s\]|\u2610")
"""An unticked task-list box (``- [ ] verified``, ``\u2610 checked``): what it lists is not done."""
_STATES_AN_ANSWER: Final = re.compile(
    r"\b(?:answers?|results?|solutions?)\b(?:\s+\w+){0,3}?\s*(?::|=|\b(?:is|are|was|were|be|equals?)\b)\s*"
    r"(?:(?:really|actually|truly|definitely|in\s+fact|now)\s+)?"
    r"(?P<value>(?:[-+\u2212]?\d|\$|\\[(\[A-Za-z]).*)",
    re.IGNORECASE | re.DOTALL,
)
"""A sentence that states an answer's value (``The correct answer is 43``, ``the result should be
$x+1$``); ``The solution is complete`` states none."""
_TRUE_VALUE_SAID: Final = re.compile(
    r"\b(?:true|actual|real|exact|correct|right|precise|proper|intended|expected|genuine)\s+(?:final\s+)?"
    r"(?:values?|answers?|results?|numbers?|counts?|totals?|figures?|amounts?|solutions?)\b(?:\s+\w+){0,3}?\s*"
    r"(?::|=|\b(?:is|are|was|were|would\s+be|should\s+be|must\s+be|equals?|lies|comes\s+to|"
    r"involves|contains|includes|requires|differs)\b)\s*(?P<value>.*)",
    re.IGNORECASE | re.DOTALL,
)
"""A later sentence that says what the true value is (``The true value is irrational.``, ``The exact count
would be larger.``): unless it restates the box, the box was not that value."""
_SIGNED_NUMBER: Final = re.compile(r"[-+]?\d+(?:\.\d+)?")
_MORE_DIGITS: Final = re.compile(r"[.,]?\d")
_NOT_CONTENT: Final = re.compile(r"\s+|\$|\\[()\[\]]|[{}]")


_SPACING_MARK: Final = re.compile(r"\\[,;:! ]|\{,\}|~")


def _bare_text(text: str) -> str:
    """``text`` without spaces, math delimiters, braces and marks that only lay it out (``\\dfrac`` is
    ``\\frac``, ``\\left(`` is ``(``, ``10\\,080`` is ``10080``), to see whether two statements are one."""
    return _NOT_CONTENT.sub("", _SPACING_MARK.sub("", size_marks_dropped(text)))


_BOX_COMMAND: Final = re.compile(r"\\(?:boxed|fbox|framebox|bbox)(?:\[[^\]]*\])?(?![A-Za-z])")
"""A box around a restatement says nothing more: ``The answer is \\boxed{42}`` restates 42."""


def _restates(value: str, boxed: str) -> bool:
    """Whether a later statement of the answer (``value``, to the sentence's end) says what the box
    says: the same text, or the box's number followed by no further digit (``42 dollars``)."""
    said = _bare_text(_BOX_COMMAND.sub("", value)).rstrip(".!?")
    said, boxed = DIGIT_GROUP_COMMA.sub("", said), DIGIT_GROUP_COMMA.sub("", boxed)  # "1,940" restates "1940"
    if said == boxed or said.endswith("=" + boxed):
        return True
    return bool(_SIGNED_NUMBER.fullmatch(boxed)) and said.startswith(boxed) and not _MORE_DIGITS.match(said, len(boxed))


_ROMAN_NUMERAL: Final = re.compile(
    r"\b(?=[MDCLXVI]{2,}\b)M{0,4}(?:CM|CD|D?C{0,3})(?:XC|XL|L?X{0,3})(?:IX|IV|V?I{0,3})\b")
_ROMAN_DIGITS: Final = {"I": 1, "V": 5, "X": 10, "L": 50, "C": 100, "D": 500, "M": 1000}


def _roman_value(numeral: str) -> int:
    """The value of a Roman numeral (``XLIII`` is 43): a digit before a larger one is subtracted."""
    values = [_ROMAN_DIGITS[digit] for digit in numeral]
    return sum(-value if value < after else value for value, after in zip(values, [*values[1:], 0], strict=True))


def _concludes_another_value(sentence: str, prose: str, answer: str) -> bool:
    """Whether ``sentence`` is a value with at most announcing words around it (``Thus 43.``,
    ``Therefore $x = 43$.``, ``$-(p - q)$``) that is not the box's (``So $x = 42$.`` is)."""
    words = [word.lower() for word in re.findall(r"[A-Za-z']+", prose)]
    roman = _ROMAN_NUMERAL.search(prose)
    if roman is not None and all(word in _ANNOUNCING or len(word) == 1 or word.upper() == roman.group()
                                 for word in words):
        return _roman_value(roman.group()) != plain_number(answer)  # "Final: XLIII" after a box of 42
    if not all(word in _ANNOUNCING or len(word) == 1 for word in words):
        return False
    value = _bare_text(_value_of(sentence)).strip(".,;:!()[]\"'")
    boxed = _bare_text(answer)
    if not value or value == boxed or value.endswith("=" + boxed):
        return False
    computed = spoken_value(_value_of(sentence))  # "Thus 84/2.": arithmetic that computes the box restates it
    return computed is None or computed != plain_number(answer)


_CHECK_MARKS: Final = re.compile(f"[{_CHECK_MARK_CHARACTERS}]")
_DOUBT_MARKS: Final = re.compile("[\u2753\u2754\U0001f914\U0001f937\U0001f615\U0001f61f]")
"""Question marks and faces that doubt (thinking, shrugging, confused, worried)."""


def _ends_with_another_value(sentence: str, answer: str) -> bool:
    """Whether the last clause of a later sentence (after its last colon, comma or semicolon) is a value with
    at most announcing words that the box does not hold: ``Update: 43.``, ``On reflection, 43.``,
    ``The correct value: 43.``, ``Confidence: 10%.``. A reader meets a second answer after the box."""
    prose = MATH_SEGMENT.sub(lambda math: " " * len(math.group()), sentence)  # a comma in a formula is no break
    cut = max(prose.rfind(mark) for mark in ":,;")
    if cut < 0:
        return False
    tail = _CHECK_MARKS.sub(" ", sentence[cut + 1 :])
    if not re.search(r"\d", tail) or re.match(r"\d", tail):
        return False  # no value, or a comma inside a number (1,000)
    return _concludes_another_value(tail, _prose_only(tail), answer)


def _value_of(sentence: str) -> str:
    """``sentence`` without its announcing words and prose punctuation; formulas are kept whole."""
    kept, at = [], 0
    for math in MATH_SEGMENT.finditer(sentence):
        kept += [_PROSE_MARKS.sub(" ", _ANNOUNCING_WORD.sub(" ", sentence[at : math.start()])), math.group()]
        at = math.end()
    kept.append(_PROSE_MARKS.sub(" ", _ANNOUNCING_WORD.sub(" ", sentence[at:])))
    return "".join(kept)


_ANNOUNCING_WORD: Final = re.compile(
    r"(?<![\\A-Za-z])(?:" + "|".join(sorted((re.escape(w) for w in _ANNOUNCING if w.isalpha() and len(w) > 1),
                                              key=len, reverse=True)) + r")(?![A-Za-z])",
    re.IGNORECASE,
)
_PROSE_MARKS: Final = re.compile(r"[*#>`:,]")


_CONTRASTING: Final = re.compile(r"^\W*(?:but|yet|though|although|still|whereas)\b", re.IGNORECASE)
_CONFIRMING: Final = re.compile(r"\b(?:check\w*|verif\w*|confirm\w*|holds?|works?|consistent|correct|satisf\w*|"
                                r"agrees?|match\w*|indeed|yes|valid)\b", re.IGNORECASE)
_CORRECTED_VALUE: Final = re.compile(
    r"\b(?:(?:correct|real|true|actual|right)\s+(?:\w+\s+){0,2}?(?:is|are|was|=|equals)|should\s+(?:really\s+)?"
    r"(?:be|have\s+been)|is\s+really|is\s+actually|'s\s+really|'s\s+actually|\u2019s\s+really)"
    r"\s*(?P<value>(?:[-+\u2212]?\d|\$|\{|\\[(\[A-Za-z]|[MDCLXVI]{2,}\b).*)",
    re.IGNORECASE | re.DOTALL,
)
"""A later sentence that gives a corrected value (``The correct count is 43.``, ``Really it should be 43.``)."""


def _contrasts_another_value(sentence: str, boxed: str) -> bool:
    """Whether a later sentence opens with a contrast and neither confirms the box nor restates it (``But this
    counts ordered pairs.``, ``But 43 fits better.``); ``But let me check: 6 x 7 = 42, so it holds.`` confirms."""
    if not _CONTRASTING.match(sentence):
        return False
    if boxed in _bare_text(sentence):
        return False
    return bool(re.search(r"\d", sentence)) or not _CONFIRMING.search(sentence)


def _corrects_the_value(sentence: str, boxed: str) -> bool:
    corrected = _CORRECTED_VALUE.search(sentence)
    return corrected is not None and not _restates(corrected.group("value"), boxed)


_FRAGMENT_WORDS: Final = 3
_FRAGMENT_HEDGE: Final = re.compile(r"\b(?:presumabl\w*|supposedly|allegedly|doubled|tripled|halved|squared|round\w*|"
                                    r"ish|give\s+or\s+take|estimat\w*|guess\w*)\b", re.IGNORECASE)


def _qualifying_fragment(prose: str) -> bool:
    """Whether a later sentence of a few words hedges, bounds or changes the box (``Presumably.``,
    ``Or less.``, ``Doubled.``); a short confirmation (``Done!``, ``QED.``) does not."""
    return bool(_QUALIFYING.search(prose) or _LATER_CLAUSE_HEDGE.search(prose) or _DENYING.search(prose)
                or _FRAGMENT_HEDGE.search(prose) or re.search(r"\b(?:more|less|fewer)\b", prose, re.IGNORECASE))


def later_sentence_taking_back(region: str, box_end: int, answer: str) -> str | None:
    """The first sentence after the final box's own that takes the answer back, or ``None``.

    A reader who meets ``\\boxed{42}`` and then ``Actually the answer is 41.`` has no final answer
    to take: a later sentence with a word of :data:`_TAKING_BACK`, or one that states an answer or
    result as a number the box does not hold (``The correct answer is 43.``), is returned to be
    read with the box, which makes the answer unreadable. Sentences that only restate or check the
    box (``So the answer is 42.``, ``Check: 6 x 7 = 42.``) are left out.
    """
    stop = _sentence_stop(region, box_end)
    return None if stop is None else sentence_taking_back(region, stop.end(), answer)


_COURTESY: Final = re.compile(
    r"\bi\s+hope\s+it\s+is\s+correct\b|"
    r"\b(?:i\s+)?(?:hope|hopefully)\s+(?:that|this|it|you|the\s+explanation)\s+(?:helps?|clarif\w*|"
    r"(?:is|was)\s+(?:helpful|clear|useful)|found\s+(?:this|it)\s+(?:helpful|useful))\b",
    re.IGNORECASE,
)
"""A closing courtesy after the answer (``Hope that helps!``, and Llama 3's few-shot formula ``I hope it is
correct.``), which says nothing about it: a hope that is not one of these (``I hope this is right.``) leaves
the answer open."""
_OFFER_TO_EXPLAIN: Final = re.compile(
    r"\b(?:if\s+(?:any|anything|something|a|this|the)\b[\w\s']{0,60}?\b(?:unclear|confusing|not\s+clear)\b"
    r"(?:\s+to\s+you)?,?\s*)?(?:please\s+)?(?:let\s+me\s+know|feel\s+free\s+to\s+ask)\b(?:\s+in\s+the\s+comments)?"
    r"(?:\s+(?:if\s+you(?:'d|\s+would)?\s+(?:like|want|need|have)\b[\w\s']{0,60}"
    r"|and\s+I\s+(?:can|will|could|would)\s+(?:expand|explain|elaborate|go\s+over)\b[\w\s']{0,30}"
    r"|if\s+(?:any|anything|something|a|this|the)\b[\w\s']{0,40}?\b(?:unclear|confusing|not\s+clear)\b))*"
    r"(?=[\s.!?*_]*\Z)",
    re.IGNORECASE,
)
"""An offer to explain more that is the whole sentence and holds no value and no word that takes the answer back
(``If any step is unclear, let me know and I can expand on it.``, ``Feel free to ask if anything is unclear.``)."""
_DOUBTING_QUESTION: Final = re.compile(
    r"\d|\\|\b(?:right|correct|wrong|sure|true|false|valid|accurate|ok|okay|answer|result|value|solution|"
    r"mistake|error|or|really|certain|possible|check\w*|agree|think|believe|guess|maybe|perhaps|indeed|should|shall|"
    r"need|re(?:count|compute|check|do)\w*|subtract|add|safe)\b",
    re.IGNORECASE,
)


_LAST_VALUE: Final = re.compile(
    r"(?:\$\$[^$]*\$\$|\$[^$]*\$|\\\(.*?\\\)|\\\[.*?\\\]|(?<![\w.])[-+\u2212]?\d[\d,.]*%?)[\s.!?)\]|]*\Z", re.DOTALL)
_FIRST_VALUE: Final = re.compile(r"\A[\s(\[|]*(?:\$[^$]*\$|[-+\u2212]?\d[\d,.]*%?)(?=[\s,.;:!?)\]|]|\Z)")
_SHORT_LATER_WORDS: Final = 16
_OPERATOR_BEFORE: Final = re.compile(
    r"(?:\b(?:times|plus|minus|by|over|divided|multiplied|and)|\\times|\\cdot|[*+\-/\u00d7\u2212])\s*\$?\s*\Z",
    re.IGNORECASE,
)


_ANSWER_NAMED_AFTER: Final = re.compile(
    r"(?P<value>(?<![\w.])[-+\u2212]?\d[\d,.]*)\s*,?\s*(?:is|was|would\s+be)\s+(?:the|my|our)\s+(?:real\s+|true\s+|"
    r"correct\s+|final\s+|actual\s+)?(?:answer|result)\b",
    re.IGNORECASE,
)
"""``The other root, 31, is the answer.``: a value named as the answer after it."""
_REPORTED_VALUE: Final = re.compile(
    r"\b(?:computed|calculated|got|obtained|found|says|said|prints?|printed|shows?|showed|returns?|returned|outputs?|"
    r"gives?|gave|yields?|yielded)\s+\$?(?P<value>[-+\u2212]?\d[\d,.]*)",
    re.IGNORECASE,
)
_UNITS_IN_WORDS: Final = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve",
                          "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen")
_TENS_IN_WORDS: Final = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_NUMBER_WORDS: Final = ({word: value for value, word in enumerate(_UNITS_IN_WORDS, start=2)}
                        | {word: 10 * value for value, word in enumerate(_TENS_IN_WORDS, start=2)})
"""Numbers in words from two to ninety (``one`` is a pronoun as often as a number: ``this one``)."""
_SPELLED: Final = re.compile(r"\b(" + "|".join(_NUMBER_WORDS) + r")(?:[-\s](" + "|".join(_NUMBER_WORDS) + r"))?\b",
                             re.IGNORECASE)


def _another_value_reported(sentence: str, boxed: str) -> bool:
    """A later sentence that reports computing or printing a value the box does not hold (``I computed 145 in
    Python.``, ``Python says 43 and I trust it.``), and does not hold the box's own value anywhere."""
    reported = _REPORTED_VALUE.search(sentence)
    if reported is None or _restates(reported.group("value"), boxed):
        return False
    return re.search(r"(?<![\d.\-\u2212])" + re.escape(boxed) + r"(?![\d.])", _bare_text(sentence)) is None


def _spelled_other_value(prose: str, boxed: str) -> bool:
    """A short later sentence that opens or ends on a number in words the box does not hold (``It's
    forty-three.``, ``Forty-three, in fact.``)."""
    words = prose.split()
    if len(words) > _FRAGMENT_WORDS + 3:
        return False
    for match in _SPELLED.finditer(prose):
        at_edge = match.start() <= len(words[0]) or not prose[match.end() :].strip(" .!,;")
        tens, ones = (_NUMBER_WORDS[group.lower()] if group else 0 for group in match.groups())
        value = tens + ones if tens % 10 == 0 and ones < 10 else tens
        if at_edge and str(value) != boxed.strip():
            return True
    return False


def _ends_on_another_value(sentence: str, prose: str, boxed: str) -> bool:
    """Whether a short later sentence ends on a value the box does not hold and does not restate the box
    anywhere (``It's 43.``, ``I meant 43.``, ``Python says 43.``, ``Method 2 gives $43$.``): a second answer,
    whatever the words around it. A check that ends on the box (``Check: $6 \times 7 = 42$.``) keeps it."""
    if len(prose.split()) > _SHORT_LATER_WORDS:
        return False
    last = _LAST_VALUE.search(sentence)
    if last is None or _OPERATOR_BEFORE.search(sentence, 0, last.start()):
        last = _FIRST_VALUE.match(sentence)  # "43 is right.", "(43 if n is odd.)": a value that opens it
        if last is None or re.match(r"\s*(?:[-+*/=\u00d7\u2212]|\\(?:times|cdot))", sentence[last.end() :]):
            return False  # "It follows from 6 times 7.", "6 \times 7 = 42": operands, not a second answer
    value = _bare_text(last.group()).strip(".!?)]")
    if not value or value == boxed or _restates(last.group(), boxed):
        return False
    return re.search(r"(?<![\d.\-\u2212])" + re.escape(boxed) + r"(?![\d.])", _bare_text(sentence)) is None


_SAYS_ARITHMETIC: Final = re.compile(
    r"^\W*(?:(?:so|thus|hence|therefore|i\.e\.)\s*,?\s*)?(?:it|this|that|which|the\s+(?:answer|result|value|total|"
    r"number|sum))\s*(?:'s|\u2019s|\s+is|\s+was|\s+equals|\s+gives|\s+comes\s+to|=)\s+(?:(?:just|simply|really|"
    r"actually)\s+)?(?P<expr>.+?)[\s.!)]*$",
    re.IGNORECASE,
)


def _says_another_sum(sentence: str, answer: str) -> bool:
    """Whether a later sentence says the answer is arithmetic whose value is not the box's (``It's 43 times 1.``,
    ``That is 44 minus 1.``): its numbers are operands, so the other rules let it pass, but a reader computes
    43. ``That is 6 times 7.`` computes the box and keeps it; a box that is no plain number is not judged here."""
    said = _SAYS_ARITHMETIC.match(" ".join(sentence.split()))
    if said is None:
        return False
    value = spoken_value(said.group("expr"))
    boxed = plain_number(answer)
    return value is not None and boxed is not None and value != boxed


_FOREIGN_DOUBT: Final = re.compile(
    # German, French, Spanish, Italian, Portuguese
    r"\b(?:nicht|nein|aber|falsch|fehler|warte|vielleicht|eigentlich|sicher|mais|pas|faux|erreur|attend\w*|"
    r"peut|plut[o\u00f4]t|non(?!-)|pero|espera|quiz[a\u00e1]s|seguro|incorrect[oa]|falso|realidad|"
    r"ungef[a\u00e4]hr|etwa|wenn|falls|unsicher|glaube|environ|presque|sauf|incertain|je\s+crois|aproximadamente|"
    r"casi|tal\s+vez|creo|equivocad\w*|forse|quasi|sbagliat\w*|per[o\u00f2]|tuttavia|credo|penso|talvez|n[a\u00e3]o|"
    r"cerca|quase|errad\w*|mas|por[e\u00e9]m|acho|creio|"
    # Dutch
    r"wacht|niet|fout|misschien|ongeveer|bijna|onzeker|verkeerd|nee|geen|tenzij|indien|als|maar|moet|nog|denk|"
    r"geloof|vermoedelijk|schatting|ondergrens|bovengrens|min\s+of\s+meer|slechts|deel|gok\w*|iets\s+(?:meer|minder)|"
    # Norwegian and Danish, Tagalog, Swahili (a few common doubt words of languages read nowhere else)
    r"kanskje|m[a\u00e5]ske|ikke|usikker|siguro|baka|yata|hindi\s+ako|labda|pengine|sina\s+uhakika|"
    # "maybe" in Czech, Slovak, Hungarian, Finnish, Estonian, Latin, Esperanto, Welsh, Afrikaans, Basque, Icelandic,
    # Albanian, Lithuanian, Latvian, Croatian/Serbian/Bosnian, Slovene, Maltese, Hausa, Zulu, Malagasy, Romanian,
    # Catalan: words of languages the lists read nowhere else, with and without their diacritics
    r"mo[z\u017e]n[a\u00e1o]|tal[a\u00e1]n|ehk[a\u00e4]|v[o\u00f5]ib[-\s]olla|fortasse|forsitan|eble|efallai|miskien|"
    r"agian|kannski|ndoshta|galb[u\u016b]t|varb[u\u016b]t|mo[z\u017e]da|morda|forsi|wata[k\u0199]ila|mhlawumbe|"
    r"angamba|poate|potser|"
    # Swedish
    r"inte|kanske|ungef[a\u00e4]r|n[a\u00e4]stan|egentligen|fel|felaktig\w*|os[a\u00e4]ker|tveksam\w*|nej|"
    r"v[a\u00e4]nta|om|tror|gissa\w*|uppskattning\w*|bara|del|gr[a\u00e4]ns|eller|troligen|"
    # Polish
    r"nie|mo[z\u017c]e|chyba|oko[l\u0142]o|prawie|w[l\u0142]a[s\u015b]ciwie|b[l\u0142][a\u0105]d"
    r"|b[l\u0142][e\u0119]dn\w*|"
    r"je[s\u015b]li|je[z\u017c]eli|niepewn\w*|pewien|pewna|zgaduj\w*|oszacowani\w*|tylko|s[a\u0105]dz[e\u0119]|"
    r"my[s\u015b]l[e\u0119]|cz[e\u0119][s\u015b][c\u0107]\w*|albo|lub|prawdopodobnie|"
    # Turkish
    r"belki|de[g\u011f]il\w*|e[g\u011f]er|yakla[s\u015f][i\u0131]k|neredeyse|asl[i\u0131]nda|yanl[i\u0131][s\u015f]"
    r"|ama|"
    r"hay[i\u0131]r|emin|san[i\u0131]r[i\u0131]m|galiba|tahmin\w*|k[i\u0131]s[i\u0131]m|b[o\u00f6]l[u\u00fc]m|ya\s+da"
    r"|veya|"
    r"muhtemelen|hatal\w*|"
    # Indonesian
    r"mungkin|bukan|tidak|jika|kalau|tapi|tetapi|sekitar|hampir|sebenarnya|salah|kira-kira|kurang\s+lebih|ragu|belum|"
    r"kira|rasa|perkiraan|tebak\w*|bagian|saja|hanya|batas|paling\s+(?:sedikit|banyak)|setidaknya|benar|atau|"
    # Vietnamese
    r"kh\u00f4ng|c\u00f3\s+l\u1ebd|c\u00f3\s+th\u1ec3|kho\u1ea3ng|g\u1ea7n|sai|n\u1ebfu|nh\u01b0ng|th\u1ef1c\s+ra"
    r"|ch\u01b0a|"
    r"ho\u1eb7c|\u0111o\u00e1n|\u01b0\u1edbc\s+t\u00ednh|ph\u1ea7n|ch\u1ec9|"
    # Ukrainian and Russian
    r"\u043d\u0435|\u043d\u0456|\u043c\u043e\u0436\u043b\u0438\u0432\u043e|\u043c\u0430\u0431\u0443\u0442\u044c|"
    r"\u043f\u0440\u0438\u0431\u043b\u0438\u0437\u043d\u043e|\u043c\u0430\u0439\u0436\u0435|"
    r"\u043d\u0430\u0441\u043f\u0440\u0430\u0432\u0434\u0456|\u043f\u043e\u043c\u0438\u043b\u043a\w*|"
    r"\u043d\u0435\u043f\u0440\u0430\u0432\u0438\u043b\u044c\u043d\w*|\u044f\u043a\u0449\u043e|\u0430\u043b\u0435|"
    r"\u0437\u0434\u043e\u0433\u0430\u0434\u043a\w*|\u0445\u0438\u0431\u043d\w*|\u043b\u0438\u0448\u0435|"
    r"\u0432\u043e\u0437\u043c\u043e\u0436\u043d\u043e|\u043d\u0430\u0432\u0435\u0440\u043d\u043e|"
    r"\u043f\u0440\u0438\u043c\u0435\u0440\u043d\u043e|\u043f\u043e\u0447\u0442\u0438"
    r"|\u043e\u0448\u0438\u0431\u043a\w*|"
    r"\u0435\u0441\u043b\u0438|\u043d\u043e)\b"
    # Arabic (not, perhaps, about, wrong, if, but) and Hindi (not, perhaps, about, wrong, if, but, guess, only):
    # their vowel signs are not word characters, so these are found anywhere
    r"|\u0644\u064a\u0633|\u0631\u0628\u0645\u0627|\u062a\u0642\u0631\u064a\u0628|\u062e\u0637\u0623"
    r"|\u062e\u0627\u0637\u0626"
    r"|\u0625\u0630\u0627|\u0644\u0643\u0646|\u063a\u064a\u0631|\u062a\u062e\u0645\u064a\u0646|\u0644\u0633\u062a"
    r"|\u0645\u062c\u0631\u062f|\u0623\u0648"
    r"|\u0928\u0939\u0940\u0902|\u0936\u093e\u092f\u0926|\u0932\u0917\u092d\u0917|\u0917\u0932\u0924"
    r"|\u0917\u093c\u0932\u0924"
    r"|\u092f\u0926\u093f|\u0905\u0917\u0930|\u0932\u0947\u0915\u093f\u0928|\u092a\u0930\u0902\u0924\u0941"
    r"|\u0905\u0928\u0941\u092e\u093e\u0928|\u0915\u0947\u0935\u0932",
    re.IGNORECASE,
)
"""Doubt, negation, condition and take-back words in the languages whose announcements are read (and a few more):
read after the box, in the clause after it, in the sentence before it and in its own sentence (``Warte, es ist
43.``, ``\\boxed{42}, kanske.``, ``Nie jestem pewien.``), so reading a language's announcement never means
skipping its hedges."""
_NON_ENGLISH_LETTER: Final = re.compile(r"[^\W\d_a-zA-Z]")


def _unread_language(prose: str, boxed: str, sentence: str) -> bool:
    """A later sentence written in letters the lists cannot read (``Mais je ne suis pas s\u00fbr.``, Cyrillic,
    Chinese) that does not restate the box: it may take the box back, so it is read with it."""
    if not _NON_ENGLISH_LETTER.search(prose):
        return False
    return re.search(r"(?<![\d.\-\u2212])" + re.escape(boxed) + r"(?![\d.])", _bare_text(sentence)) is None


def _doubting_question(prose: str) -> bool:
    """Whether a question after the box leaves it open: one about a value, the answer's truth or "it"
    (``Or is it 43?``, ``Is that right?``, ``Right?``), or a short one (``Is it?``); a tutor's question about
    the method or the reader (``See how breaking it into steps helped?``, ``Does that make sense?``, ``Any
    questions?``) does not."""
    words = prose.split()
    if len(words) <= 2 and not re.fullmatch(r"\W*any\s+(?:other\s+)?questions\W*", prose, re.IGNORECASE):
        return True
    return bool(_DOUBTING_QUESTION.search(prose))


def _offer_dropped(offer: re.Match[str]) -> str:
    """An offer to explain more says nothing of the answer, unless it takes it back on the way (``let me know if you
    would like to see why it is wrong``)."""
    said = offer.group()
    return said if _TAKING_BACK.search(said) or _FOREIGN_DOUBT.search(said) else " "


def sentence_taking_back(region: str, start: int, answer: str, *, shown: bool = True) -> str | None:
    """The first sentence of ``region`` from ``start`` on that takes ``answer`` back (the rules of
    :func:`later_sentence_taking_back`), or ``None``. ``shown=False``: ``region`` is code or comments after the
    answer, which no reader takes for a remark on it, so only a short one needs a confirming word
    (:func:`_unconfirmed_remark`); the other rules read it as they read prose."""
    boxed = _bare_text(answer)
    appendix = False
    for end, mark in [(m.start(), m.group()) for m in _SENTENCE_END.finditer(region, start)] + [(len(region), "")]:
        raw = region[start:end]
        at_line_start = start == 0 or region[start - 1] == "\n"
        sentence = " ".join(_formatting_dropped(_EXAM_MARKS.sub(" ", _FOOTNOTE_MARK.sub(" ", raw))).split())
        sentence = _QED_LETTERS.sub("QED", sentence)  # "Q.E.D." is a word, not three one-letter names
        start = end + len(mark)
        if at_line_start and _RULE_LINE.fullmatch(raw):
            appendix = True  # "---": what follows a rule is set apart from the answer
            continue
        if at_line_start and _LIST_NUMBER.fullmatch(sentence + mark.strip()):
            continue  # "1." opening a numbered line: a list's marker, no value
        if not sentence.strip(" .!?"):
            if mark == "?" or "?" in sentence:
                return "?"  # "\boxed{42}. ??": a question without words
            continue
        if _THOUGHT in sentence:
            return sentence  # a think block after the answer: the reasoning goes on
        heading = _appendix_heading(raw) if at_line_start else None
        if heading is not None:
            appendix = heading
            if heading:
                continue  # "### Notes", "**Recap**": the answer's section has ended; the notes are read below
        prose = _OFFER_TO_EXPLAIN.sub(_offer_dropped, _COURTESY.sub(" ", _prose_only(sentence)))
        if prose != _prose_only(sentence) and not re.search(r"[^\W_]", prose):
            continue  # "I hope this helps!"
        if _generic_warning(prose, sentence) or _offer(prose, mark) or _given_data_recap(prose, sentence):
            continue  # "A frequent mistake is rounding too early.", "Want me to walk through it?", "Inputs used: 4."
        prose, sentence = _METHOD_STATEMENTS.sub(" ", prose), _METHOD_STATEMENTS.sub(" ", sentence)
        as_json = _JSON_ANSWER.search(sentence)
        if as_json is not None:  # '{"final_answer": 42}': the answer again, as data, or another one
            if _restates(as_json.group("value") or as_json.group("line_value"), boxed):
                continue
            return sentence
        if (_TAKING_BACK.search(prose) or _NEGATING_THE_ANSWER.search(prose) or _REJECTING_MARKS.search(sentence)
                or _UNCHECKED_BOX.search(sentence) or _FOREIGN_DOUBT.search(prose)
                or _unread_language(prose, boxed, sentence)
                or "~~" in sentence or _contrasts_another_value(sentence, boxed)
                or _corrects_the_value(sentence, boxed)):
            return sentence
        stated = (_STATES_AN_ANSWER.search(sentence) or _ANSWER_NAMED_AFTER.search(sentence)
                  or _TRUE_VALUE_SAID.search(sentence))
        if stated is not None and not _restates(stated.group("value"), boxed):
            return sentence
        if _another_value_reported(sentence, boxed) or _spelled_other_value(prose, boxed) or _calls_it_another(prose):
            return sentence
        if not re.search(r"[^\W_]", _CHECK_MARKS.sub("", sentence)):
            if mark == "?" or "?" in sentence or _DOUBT_MARKS.search(sentence):
                return sentence + mark.strip()  # "(?)", "??", a shrug: doubt without words
            if _UNKNOWN_MARK.search(_CHECK_MARKS.sub("", sentence)):
                return sentence + mark.strip()  # "(\u00d7)", "\U0001f645": a mark no list says confirms
            continue  # a check mark confirms the box; a rule (---), a QED mark or a smile says nothing
        if len(prose.split()) <= _FRAGMENT_WORDS and _qualifying_fragment(prose):
            return sentence  # "Approximately.", "At most.", "Before rounding.": a fragment that qualifies the box
        if ((mark == "?" and _doubting_question(prose)) or _concludes_another_value(sentence, prose, answer)
                or _ends_on_another_value(sentence, prose, boxed) or _says_another_sum(sentence, answer)
                or _ends_with_another_value(sentence, answer)):
            return sentence + mark.strip()
        # A remark that holds a value is judged by the value rules above; a question by the question rule. Under a
        # heading of notes or after a rule, a remark is the reply's notes, not its answer: the lists above read it.
        if (mark != "?" and not appendix and _unconfirmed_remark(prose, shown=shown)
                and not re.search(r"\d|\$|\\[(\[]", sentence)):
            return sentence + mark.strip()
    return None


_JSON_ANSWER: Final = re.compile(
    r"\{\s*\"(?:final_?answer|answer|result|final)\"\s*:\s*\"?(?P<value>[^\",}]+?)\"?\s*"
    r"(?:,\s*\"confidence\"\s*:\s*\"?(?:high|very\s+high|certain|1(?:\.0)?)\"?\s*)?\}"
    r"|\A\W*\"(?:final_?answer|answer|result)\"\s*:\s*\"?(?P<line_value>[^\",}]+?)\"?\s*,?\s*\}?\s*\Z", re.IGNORECASE)
"""An answer written as JSON after the box (``{"final_answer": 42}``), with at most a high confidence beside it."""
_ANOTHER_COUNT: Final = re.compile(
    r"\b(?:(?:number|count|total|amount|tally)\s+of\s+(?:the\s+)?(?P<thing>[a-z]+)|(?P<counted>[a-z]+)\s+(?:count|total|tally))\b",
    re.IGNORECASE,
)


def _calls_it_another(prose: str) -> bool:
    """A later sentence that calls the box a count of a thing the question names only among its givens (``This
    checks out as the number of boxes.``, ``Verified: this is the packs count.``): a confirmation of another value."""
    found = _ANOTHER_COUNT.search(prose)
    if found is None:
        return False
    thing = found.group("thing") or found.group("counted")
    return counts_another_thing(["number", "of", thing.lower()])


_QED_LETTERS: Final = re.compile(r"\bQ\.\s?E\.\s?D\b\.?")
_RULE_LINE: Final = re.compile(r"\s*(?:-{3,}|\*{3,}|_{3,}|(?:\*\s*){3,})\s*")
_LIST_NUMBER: Final = re.compile(r"\s*\d{1,2}[.)]\s*")
_FOOTNOTE_MARK: Final = re.compile(r"\[\^\w{1,10}\]:?")
"""A Markdown footnote's mark (``[^2]:``, ``text[^1]``): a reference, no value."""
_EXAM_MARKS: Final = re.compile(
    r"\[\s*(?:marks?|pts?|points?)\s*:?\s*\d{1,3}\s*\]|\(\s*\d{1,3}\s*(?:marks?|pts?|points?)\s*\)"
    r"|\[\s*\d{1,3}\s*(?:marks?|pts?|points?)\s*\]|\(\s*ans\.?\s*\)",
    re.IGNORECASE,
)
"""An exam script's annotations (``[Marks: 4]``, ``(3 marks)``, ``(Ans.)``): what the question is worth, not a value."""
_APPENDIX_HEADING: Final = re.compile(
    r"(?:notes?|remarks?|comments?|recap|summary|key\s+(?:takeaways?|points?|ideas?|steps?)|takeaways?|"
    r"(?:common\s+)?(?:pitfalls?|mistakes?|errors?)(?:\s+to\s+avoid)?|practice(?:\s+problems?)?|follow[-\s]?ups?|"
    r"extensions?|exercises?|footnotes?|references?|discussion|explanation|why\s+(?:it|this)\s+works|"
    r"alternative\s+(?:methods?|approach(?:es)?|solutions?)|appendix|further\s+reading|related\s+problems?|"
    r"(?:study\s+)?tips?|hints?|bonus|challenge|insights?|observations?|lessons?(?:\s+learned)?|wrap[-\s]?up|"
    r"in\s+short|tl;?dr|try\s+it\s+yourself|next\s+steps?|method|approach|verification|sanity\s+check|"
    r"check(?:ing)?|reflection)",
    re.IGNORECASE,
)
"""Names of the sections a solution may append after its answer: notes, a recap, pitfalls, practice."""


def _appendix_heading(line: str) -> bool | None:
    """For a heading line after the answer (``### Notes``, ``**Recap:**``, ``Key takeaways:``), whether it opens
    notes appended to the answer; ``None`` when the line is no heading (a heading of another name, ``## Update``,
    is ``False``: what follows it is read as remarks on the answer)."""
    found = _HEADING_LINE.fullmatch(line.strip())
    if found is None:
        return None
    name = re.sub(r"[^\w\s;'-]", " ", _heading_name(found)).strip()
    return bool(_APPENDIX_HEADING.fullmatch(" ".join(name.split())))


_HEADING_LINE: Final = re.compile(
    r"#{1,6}\s+(?P<name>[^\n]+?)\s*#*|(?:\*\*|__)(?P<bold>[^*_\n]+?)[:.]?(?:\*\*|__)\s*:?"
    r"|(?P<label>[A-Za-z][A-Za-z ;'-]{0,30}):")


def _heading_name(found: re.Match[str]) -> str:
    return found.group("name") or found.group("bold") or found.group("label") or ""


_GENERIC_WARNING: Final = re.compile(
    r"\A\W*(?:watch\s+out|be\s+careful|careful|caution|warning|beware|(?:common\s+)?pitfall|(?:study\s+)?tip\s*:|"
    r"(?:common|frequent|typical)\s+(?:mistakes?|errors?|slips?)\s*:|"
    r"(?:a|one|the)\s+(?:common|frequent|typical|classic|easy|usual)\s+(?:mistake|error|slip|pitfall|trap)|"
    r"(?:the\s+)?most\s+common\s+(?:mistake|error|slip)|students\s+often|it\s+is\s+easy\s+to|"
    r"note\W+(?:a|the)\s+\w+\s+(?:error|mistake|slip)\b.*\bmost\s+common\b)",
    re.IGNORECASE,
)
_ABOUT_THIS_WORK: Final = re.compile(
    r"\b(?:I|I'm|I've|I'd|me|my|mine|we\s+made|our\s+(?:answer|result|work|solution)|this\s+(?:answer|result|value|"
    r"box\w*)|the\s+(?:answer|result|box\w*|value)\s+(?:above|here|we\s+got))\b|\babove\b",
    re.IGNORECASE,
)


def _generic_warning(prose: str, sentence: str) -> bool:
    """A warning to the reader about the kind of problem (``A frequent mistake is rounding too early.``, ``Watch out:
    it is easy to mix up the two quantities.``), with no value and no word about this reply's own work or answer:
    it names mistakes without confessing one."""
    return (bool(_GENERIC_WARNING.search(prose)) and not _ABOUT_THIS_WORK.search(prose)
            and not re.search(r"\d|\$|\\[(\[]", sentence))


_OFFER: Final = re.compile(
    r"\A\W*(?:(?:would|do)\s+you\s+(?:like|want)|want\s+me\s+to|shall\s+I|should\s+I\s+(?:walk|go|show|explain)|"
    r"if\s+you(?:'d|\u2019d|\s+would)\s+like|if\s+you\s+(?:have|want|need)|"
    r"try\s+(?:it|this|one|explaining|a\s+(?:variant|similar)|"
    r"another|the\s+same)|can\s+you\s+(?:try|solve|explain|see)|how\s+about\s+(?:a|another|trying))\b",
    re.IGNORECASE,
)
_OFFER_DOUBT: Final = re.compile(
    r"\b(?:right|correct|wrong|sure|mistake|error|really|re(?:check|compute|do|do)\w*|doubt\w*|think|believe|guess|"
    r"maybe|perhaps|verify|confirm|fix|chang\w*|other\s+(?:answer|value|result))\b|\d|\$",
    re.IGNORECASE,
)


def _offer(prose: str, mark: str) -> bool:
    """A tutor's offer or exercise after the answer (``Would you like a hint-by-hint version for practice?``, ``Try
    this next: solve a variant ...``, ``If you have another problem, send it my way.``), with no word that doubts or
    checks the answer and no value."""
    return bool(_OFFER.search(prose)) and not _OFFER_DOUBT.search(prose)


_GIVEN_DATA_LABEL: Final = re.compile(
    r"\A\W*(?:inputs?|givens?|given\s+(?:data|values|numbers|quantities)|data|values?|numbers?|quantities)\s*"
    r"(?:used|given|from\s+the\s+(?:problem|question))?\W*"
    r"\Z", re.IGNORECASE)


def _given_data_recap(prose: str, sentence: str) -> bool:
    """A line listing the problem's given numbers (``Inputs used: 4, 100.``): a label of given data, and every number
    in it is one the question writes."""
    label, colon, values = sentence.partition(":")
    if not colon or not _GIVEN_DATA_LABEL.match(label):
        return False
    numbers = re.findall(r"\d+(?:\.\d+)?", values)
    written = question_numbers()
    return bool(numbers) and written is not None and all(number in written for number in numbers)


_METHOD_STATEMENTS: Final = re.compile(
    r"\bavoid(?:ed|ing|s)?\s+(?:double[-\s]?count\w*|over-?count\w*|mistakes?|errors?|rounding)\b|"
    r"\b(?:no|without)\s+(?:extra\s+|additional\s+|further\s+)?(?:approximations?|rounding|assumptions?|"
    r"numerical\s+data(?:\s+beyond\s+the\s+statement(?:\s+itself)?)?)(?:\s+(?:was|were|is|are))?"
    r"(?:\s+(?:made|used|needed|required|necessary|involved|done))?(?:\s+until\s+the\s+end)?\b|"

    r"\binstead\s+of\s+(?!\d)[a-z]+(?:ing|tion|ment)\b|\bwith\s+different\s+(?:data|numbers|values|inputs)\b|"
    r"\bnothing\s+is\s+counted\s+twice\b|"
    r"\b(?:all\s+)?intermediate\s+(?:quantities|values|results|steps)\s+(?:were|are)\s+(?:kept\s+)?exact\b|"
    r"\balternatively\s*,?\s*(?:one|you|we)\s+(?:can|could|may)\s+(?:also\s+)?(?:approach|solve|do|tackle|compute|"
    r"get|derive|find|see)\b",
    re.IGNORECASE,
)
"""Statements of method that hold a word of the take-back lists (``Avoided double counting by organizing the cases``,
``No rounding was used until the end``, ``by elimination instead of substitution``): dropped before those lists read
a later sentence."""


_UNKNOWN_MARK: Final = re.compile(
    r"[^\s\w.,;:!()\[\]{}*_#>|=~`'\"$\\/\-\u2014\u2013\u220e\u25a1\u25a0" f"{_CHEERFUL_MARK_CHARACTERS}]"
)
"""A mark in a sentence of marks after the box that is not layout, a QED sign or a known cheerful one (a
celebration, a smile, a thumbs-up, sparkles, a star): ``(\u00d7)``, ``\u2a2f``, ``\U0001f645``, ``\U0001f925``."""
_REMARK_WORDS: Final = 4
_CONFIRMING_REMARK: Final = re.compile(
    r"\b(?:check\w*|verif\w*|confirm\w*|correct|right|yes|yep|done|qed|indeed|exactly|precisely|final|answer\w*|"
    r"solution|result|summary|conclusion|explanation|steps?|solved|complete|that's\s+it|that\s+is\s+it|"
    r"(?:good\s+)?luck|thanks?|thank\s+you|cheers|enjoy|glad|happy|welcome|questions?|let\s+me\s+know|"
    r"consistent|matches|agrees|holds|works|valid|satisf\w*|units?|dollars?|cents?|note|recap|remarks?|"
    r"answer\s+key|boxed|above|below|as\s+required|as\s+expected|as\s+claimed|as\s+desired|good|great|perfect|"
    r"nice|ok|okay|sanity|all\s+set|and\s+we're\s+done|end|fin|reasoning|why|work(?:ing)?|details|derivation|"
    r"method|approach|proof|justification|(?:you(?:'ve)?\s+)?got\s+this|keep\s+(?:it\s+)?up|well\s+done|have\s+fun|"
    r"tl;?dr|makes?\s+sense|confidence\W+(?:high|very\s+high|certain))\b|\u220e|\u25a1|\u25a0",
    re.IGNORECASE,
)
"""Words a short remark after the box may use and still confirm or close it (``Check: $6 \\times 7 = 42$.``,
``Verified.``, ``Done!``, ``Good luck!``, ``QED``)."""


def _unconfirmed_remark(prose: str, *, shown: bool = True) -> bool:
    """Whether a remark after the final box (a sentence holding no value) says anything but a confirmation or a
    closing. The lists of take-backs cannot hold every ``Yeah right.``, ``I would not put money on that one.`` or
    ``All that's left is to take the square root of this.``, so a remark keeps the box only with positive evidence:
    a short one (a few words) that confirms or closes (:data:`_CONFIRMING_REMARK`); a longer one that confirms
    (:data:`_CONFIRMING_SENTENCE`) or encourages (:data:`_ENCOURAGING`) with no word of
    :data:`_NOT_PLAIN_CONFIRMATION`, or that gives an account of the method (:data:`_EXPLAINING`) with nothing of
    :data:`_NOT_PLAIN_ACCOUNT`. ``shown=False``: code or a comment, where only a short remark needs evidence."""
    if re.match(r"\s*[~\-\u2014]\s*[\w\[]", prose):
        return False  # "~cool_geo", "-[user](link)": a forum signature
    words = re.findall(r"[^\W\d_]+(?:'[^\W\d_]+)?", prose)
    if not words:
        return False
    harmless = _HARMLESS_PHRASES.sub(" ", prose)
    plain = not _NOT_PLAIN_CONFIRMATION.search(harmless)
    if len(words) <= _REMARK_WORDS:
        # "Verified.", "It cannot be smaller.", but not "I withdraw this answer."
        return not (plain and (_CONFIRMING_REMARK.search(prose) or _CONFIRMING_SENTENCE.search(prose)))
    if not shown:
        return False  # "% a note on the layout": a comment or a line of code is no remark on the answer
    if plain and (_CONFIRMING_SENTENCE.search(prose) or _ENCOURAGING.match(prose)):
        return False
    # An account of the method names operations it used ("The key idea was to divide first."): only doubts, and
    # an operation still applied to the box ("The key idea: divide this by 2."), keep it from being evidence.
    return not (_EXPLAINING.search(prose) and not _NOT_PLAIN_ACCOUNT.search(harmless))


_CONFIRMING_SENTENCE: Final = re.compile(
    r"\b(?:verif\w*|confirm\w*|checks?\s+out|check(?:ed|ing)?|double-check\w*|consistent|satisf\w*|match(?:es|ed)?|"
    r"holds?|agrees?|works?\s+out|makes\s+sense|sanity|as\s+expected|is\s+correct|correct(?:ly)?|valid|recap|"
    r"summary|in\s+short|in\s+summary|confident|need\s+to\s+consider|same\s+(?:result|answer|value)|"
    r"(?:cannot|can't|can\s+not)\s+be\s+(?:smaller|larger|less|more|lower|higher|improved)|"
    r"the\s+only\s+(?:one|solution|value|root|answer)|no\s+other|unique|no\s+further|not\s+hard\s+to|"
    r"the\s+quantity\s+the\s+(?:question|problem)\s+asks\s+for|rejected|extraneous|the\s+units?\s+(?:are|is)|"
    r"counts?\s+each\s+\w+(?:\s+\w+)?"
    r"\s+(?:exactly\s+)?once|helps?\s+(?:to\s+)?(?:see|understand)\s+why|(?:shown|derived|explained|worked\s+out)"
    r"\s+above)\b|"
    r"\A\W*(?:(?:so|and|thus|hence)\s*,?\s*)?(?:this|that|it)\s+(?:is|was)\s+(?:the|our|my)\s+"
    r"(?:final\s+|required\s+|requested\s+|desired\s+)?(?:answer|result|total|value|count|number\s+of)\b|"
    r"\A\W*(?:(?:and|so)\s+)?(?:this|that)\s+completes\s+the\s+(?:computation|calculation|solution|proof|problem)\b|"
    r"\b(?:kept|left|remained)\s+exact\b|"
    r"\A\W*(?:q\.?\s?e\.?\s?d\.?|hence\s+proved|proved|\u00a1?listo|fertig|termin[e\u00e9]|c'est\s+fini|klaar|gotowe)\W*\Z",
    re.IGNORECASE,
)
"""What a longer remark after the box says when it confirms, sums up or names what the box is (``Substituting back
confirms this result.``, ``All conditions of the problem are satisfied.``, ``**Recap:** we set up the equations and
solved them.``, ``There are no other solutions.``, ``This is the number of ways.``)."""
_EXPLAINING: Final = re.compile(
    r"\bthe\s+key\s+(?:idea|step|insight|trick|observation|fact|point)s?\s+(?:was|were|is|are|here)\b|"
    r"\b(?:here\s+)?we\s+used\b|\bmore\s+generally\b|\bthe\s+same\s+(?:approach|method|idea|argument|reasoning)\s+"
    r"works\b|\bthe\s+problem\s+asks\s+for\b.*\bexactly\s+what\s+we\s+(?:computed|found)\b|"
    r"\bas\s+it\s+(?:should|must)\s+be\b|\bas\s+required\b|\bas\s+stated\b|\bI\s+can\s+(?:walk|go|explain|show|"
    r"elaborate|expand)\b|\bedited\s+for\s+clarity\b|"
    r"\bgenerali[sz]es?\b|\bfollows?\s+directly\b|"
    r"\A\W*(?:note\s+on\s+the\s+(?:method|approach)|(?:the\s+)?method\s*:|(?:the\s+)?approach\s*:|"
    r"key\s+idea|explanation|interpretation|in\s+words|that\s+is|i\.\s?e\.|this\s+is\s+because|"
    r"(?:notice|note)\s+that|in\s+summary|in\s+short|why(?:\s+this\s+works)?|reasoning|intuition)\b",
    re.IGNORECASE,
)
"""What a longer remark after the box says when it explains the work it closes (``The key idea was to pair
terms from both ends.``, ``More generally, the same approach works for any problem of this type.``, ``Note
that the problem asks for the total, which is exactly what we computed.``, ``the answer is an integer, as it
should be``), or a label that opens an explanation or an interpretation (``**Key idea:**``, ``In words:``,
``That is,``, ``This is because``)."""
_ENCOURAGING: Final = re.compile(
    r"\W*(?:(?:nice|great|good|excellent)\s+(?:work|job|effort)|well\s+done|keep\s+(?:practi[cs]\w*|it\s+up|going)|"
    r"try\s+(?:a\s+)?similar|as\s+(?:practice|an\s+exercise)|great\s+question|"
    r"happy\s+to\s+(?:help|clarify|explain)|good\s+luck|thanks?\b|thank\s+you|notice\s+how\s+each\s+step)",
    re.IGNORECASE,
)
"""How a tutor's closing line begins (``Nice work sticking with it.``, ``Keep practicing problems like this one.``,
``Happy to clarify any step.``): it encourages and says nothing about the box."""
_HARMLESS_PHRASES: Final = re.compile(
    r"\bdouble[-\s]?check\w*|\bthe\s+only\s+(?:one|solution|value|root|answer|candidate)\b|\bonly\s+used\b|"
    r"\bif\s+(?:needed|necessary|anything\s+is\s+unclear|you(?:'d|\s+would)?\s+like)\b|"
    r"\b(?:match\w*|consistent\s+with|agrees?\s+with)\s+(?:our|the|my)\s+(?:earlier\s+)?"
    r"(?:estimate|approximat\w*(?:\s+value)?)\b|"
    r"\b(?:we|you|i)\s+(?:don't|do\s+not|didn't|did\s+not)\s+need\s+to\s+consider\s+the\s+other\s+cases?\b|"
    r"\b(?:there\s+(?:are|is)\s+|with\s+)?no\s+other\s+(?:values?|solutions?|answers?|candidates?|cases?|roots?)"
    r"(?:\s+(?:works?|satisf\w*|fits?))?\b|"
    r"\bthe\s+other\s+(?:roots?|solutions?|values?|cases?|candidates?)\s+(?:is|are)\s+"
    r"(?:rejected|extraneous|discarded|excluded|invalid|impossible)\b|"
    r"\bno\s+further\s+(?:steps?|work|computation|simplification|conversion)\s+(?:is|are)\s+(?:needed|necessary|"
    r"required)\b|\bno\s+cases?\s+(?:were|was)\s+left\s+out\b|"
    r"\bnot\s+hard\s+to\s+(?:check|verify|see)\b|"
    r"\b(?:it|this|that)\s+(?:cannot|can't|can\s+not)\s+be\s+(?:smaller|larger|less|more|lower|higher|improved)\b|"
    r"\bbut\s+(?=let\s+(?:me|us)\s+(?:double[-\s]?)?check)|"
    r"\bthe\s+units?\s+(?:are|is)\b|\bas\s+it\s+(?:should|must)\s+be\b|\bworking\s+through\b|"
    r"\b(?:distribut|simplif|comput|find|solv|add|subtract|multipl|divid|factor|"
    r"expand|compar|isolat|substitut)\w*\b[^.,;]{0,40}?\bfirst\b",
    re.IGNORECASE,
)
"""Phrases of right closings that hold a word of :data:`_NOT_PLAIN_CONFIRMATION` and still only confirm or offer
(``Let's double-check``, ``it is the only one that does``, ``Happy to clarify any step if needed``, ``No other
value works.``, ``(The units are dollars.)``: the unit itself is still read)."""
_DOUBTING_WORDS: Final = (
    r"not|no|never|nothing|none|nor|\w+n't|cannot|but|however|although|though|yet|except|unless|if|whether|"
    r"only|wrong|incorrect\w*|fail\w*|doubt\w*|unsure|uncertain\w*|suspic\w*|maybe|perhaps|probabl\w*|"
    r"possibl\w*|might|may|could|would|should|chances?|odds|guess\w*|bet|hunch|feel\w*|seems?|appears?|"
    r"approx\w*|adjust\w*|need\w*|still|left|remain\w*|instead|rather|other|another|different|wait|"
    r"actually|hmm+|oops|mistake\w*|errors?|botch\w*|withdraw\w*|retract\w*|provisional\w*|tentative\w*|"
    r"placeholder|stand-?in|working|draft|assum\w*|suppos\w*|rough\w*|estimat\w*|nearly|almost|partial\w*|"
    r"excluding|including|ignor\w*|skip\w*|later|first|earlier|previous|old|new|revis\w*|updat\w*|chang\w*|"
    r"replac\w*|swap\w*|switch\w*|correct(?:ed|ion)|fix\w*|bunk|bogus|garbage|nonsense|random|arbitrar\w*|filler|"
    r"copied|copying|mostly|partly|largely|somewhat|neighbou?r\w*|opinion|save|apart|aside|barring|besides|"
    r"excepting|exceptions?|bar\s+(?:one|the|a|that)"
)
"""Denials, conditions, doubts, hedges, another or an earlier value, a revision, a step still to take."""
_CHANGING_WORDS: Final = (
    r"round\w*|half|halv\w*|twice|double|triple|squar\w*|roots?|cub(?:e|es|ed|ing)|add\w*|subtract\w*|multipl\w*|"
    r"divid\w*|times|tack\w*|apply\w*|appl(?:ies|ied)|pre-\w+|"
    r"minus|plus|reciprocal|scal\w*|units?|per|thousands?|millions?|billions?|percent\w*|base"
)
"""An operation or a scale: in a confirmation it changes the box (``It checks out, times 3.``); in an account of the
method already done (``The key idea was to divide first.``) it describes the work."""
_NARROWING_WORDS: Final = (
    r"before|numerator|denominator|version|restrict\w*|remov\w*|matters|special|holds?\s+for|works?\s+for|"
    r"valid\s+for|true\s+for"
)
"""What makes a confirmation one of something narrower than the box (``This checks out as the value before the
final division.``, ``Holds for squares.``); an account of the method may use them (``divide before adding``)."""
_NOT_PLAIN_CONFIRMATION: Final = re.compile(rf"\b(?:{_DOUBTING_WORDS}|{_CHANGING_WORDS}|{_NARROWING_WORDS})\b",
                                            re.IGNORECASE)
"""A word that keeps a remark from being a plain confirmation: a doubt, an operation or scale, a narrowing
(``This is consistent only if the coins are fair.``, ``It checks out, times 3.``, ``Holds for squares.``)."""
_NOT_PLAIN_ACCOUNT: Final = re.compile(
    rf"\b(?:{_DOUBTING_WORDS})\b|\b(?:{_CHANGING_WORDS}|take|raise)\b[^.;]{{0,30}}?\b"
    r"(?:this|that|it|the\s+(?:answer|result|box\w*|value|number\s+above))\b|"
    r"\b(?:this|that|it)\s+(?:is|was)\s+(?:the|a|an|only|just)\s+"
    r"(?!(?:final\s+)?(?:answer|result|total|value|count|number|solution|amount|sum)\b)[a-z]",
    re.IGNORECASE,
)
"""What keeps an account of the method from being evidence: a doubt, an operation applied to the box (``divide this
by 2``), or the box called another thing (``In summary, this is the numerator of the fraction.``)."""


def _split_clause(after: str) -> tuple[str, str]:
    """What follows a box up to the first clause break (read with the box), and the rest of the
    sentence (read with it only when it denies or changes the value: ``\\boxed{42}, which is wrong``)."""
    match = _CLAUSE_BREAK.search(after)
    if match is None:
        return after, ""
    return after[: match.start()], after[match.start() :]


def _sentence_start(text: str, begin: int) -> int:
    """Where the sentence holding ``begin`` starts: after a line break, a full stop, ``!`` or ``?``
    followed by a space, or an opening answer tag."""
    floor = max(0, begin - CONTEXT_WINDOW)
    start = floor
    for match in _SENTENCE_END.finditer(text, floor, begin):
        if match.group() == "\n" and _runs_on(_last_line(text, start, match.start()), text[start : match.start()]):
            continue
        start = match.end()
    opening = text.lower().rfind("<answer>", floor, begin)
    return max(start, opening + len("<answer>") if opening >= 0 else 0)


def _last_line(text: str, start: int, end: int) -> str:
    """The last line of ``text[start:end]`` that holds prose (a line that only opens a display, ``\\[``, does not)."""
    lines = [line for line in text[start:end].split("\n") if _MATH_DELIMITERS.sub(" ", _prose_only(line)).strip(" *_")]
    return lines[-1] if lines else ""


_CONJUNCTIONS: Final = frozenset({"or", "nor", "either", "otherwise", "but"})
_LEADING_WORDS: Final = frozenset({"or", "and", "either", "nor", "but", "otherwise", "than", "to", "of", "by", "from",
                                   "with", "for", "be", "not"})
"""Last words of a line that lead into what the next line says (``Either 43 or``, ``Close to``)."""


def _runs_on(line: str, sentence: str) -> bool:
    """Whether a line break (blank lines included) after ``line`` leaves its ``sentence`` open into the next
    line: the line ends on a word that leads into what follows (a colon, a verb such as ``is``, or a denying or
    qualifying word: ``The answer is not``, ``It is not:``, ``approximately``) and the sentence so far denies or
    qualifies, so that is read with the box below; a line that ends on a conjunction (``Either 43 or``) or is a
    short denial (``Not so fast``) always runs on. A line that ends complete (``... = 3360 points``, ``Third Bag:
    300/2 = 150``) ends its sentence, whatever words it holds."""
    prose = _MATH_DELIMITERS.sub(" ", _prose_only(line)).rstrip(" *_")
    if not prose.strip() or prose[-1] in ".!?" or _STOP_INSIDE_MATH.search(line):
        return False
    if len(prose.split()) <= _SHORT_CLAUSE_WORDS + 2 and _DENYING.search(prose):
        return True  # a short line that denies, over the box: "Not so fast", then the box
    ending = re.search(r"((?:[A-Za-z'\u2019]+\s+)?[A-Za-z'\u2019]+)[\s*_]*(:?)\s*\Z", prose)
    if ending is None:
        return False
    last_words = ending.group(1)
    if last_words.split()[-1].lower() in _CONJUNCTIONS:
        return True  # "Either 43 or" over the box: a sentence cannot end there
    leads_on = bool(ending.group(2) or last_words.split()[-1].lower() in _COPULAS | _LEADING_WORDS
                    or _DENYING.search(last_words) or _QUALIFYING.search(last_words))
    whole = _MATH_DELIMITERS.sub(" ", _prose_only(sentence))
    return leads_on and bool(_DENYING.search(whole) or _QUALIFYING.search(whole))


_STOP_INSIDE_MATH: Final = re.compile(r"[.!?]\s*(?:\$+|\\[)\]])[\s*_]*\Z")
"""A line whose last formula ends on a full stop (``... so $x = 8.$``, ``\\[x \\in (0, 9).\\]``) ends its sentence."""


def _sentence_stop(text: str, end: int) -> re.Match[str] | None:
    """Where the sentence after a box ends: as :data:`_SENTENCE_END`, but a line break before a line that
    starts in lower case (``\\boxed{42}`` then ``which is wrong.``) continues the sentence."""
    ceiling = end + CONTEXT_WINDOW
    for match in _SENTENCE_END.finditer(text, end, ceiling):
        if match.group() == "\n" and _LOWER_CASE_NEXT.match(text, match.end(), ceiling):
            continue
        return match
    return None


_LOWER_CASE_NEXT: Final = re.compile(r"(?:\s|\$|\\[(\[])*[a-z]")


def in_context(text: str, span: tuple[int, int, int, int], bounds: tuple[int, int]) -> str:
    """The box's content, with what is written against it (a reader does not see a box alone):
    the command whose argument it is (``\\cancel{\\boxed{42}}``, ``\\frac{1}{\\boxed{42}}``), a sign,
    relation or digit before it (``-\\boxed{42}``, ``x \\neq \\boxed{42}``, ``4\\boxed{2}``) and a
    power, factorial, digit or text after it (``\\boxed{4}^2``, ``\\boxed{42}\\text{ is wrong}``).
    The box then becomes a plain group, so the grader reads the whole: ``-{42}`` is -42. ``bounds``
    are where that formula begins and ends (:func:`context_bounds`)."""
    start, first, last, finish = span
    begin, end = bounds
    if (begin, end) == (start, finish):
        return text[first:last]
    return text[begin:start] + "{" + text[first:last] + "}" + text[finish:end]


def context_bounds(text: str, span: tuple[int, int, int, int], pairs: dict[int, int], closers: dict[int, int],
                   enclosing: int | None) -> tuple[int, int]:
    """Where the formula a box stands in begins and ends (see :func:`in_context`): ``pairs`` and
    ``closers`` map the reply's balanced braces both ways, ``enclosing`` is the outermost brace open
    around the box (found for every box in one pass by :func:`_outermost_enclosing`)."""
    start, _, _, finish = span
    begin, end = start, finish
    if enclosing is not None:
        begin, end = _command_head(text, enclosing, pairs, closers), pairs[enclosing] + 1
    left, right = _left_context(text, begin, pairs, closers), _right_context(text, end, pairs)
    opened = _open_brackets(text[left:begin])
    return left, _closed_brackets(text, right, opened, pairs) if opened else right


_COMMAND_BEFORE: Final = re.compile(r"\\[A-Za-z]+\*?\s*$")
_COMMAND_AT: Final = re.compile(r"\\([A-Za-z]+\*?|.)")
_NOT_EQUALS_BEFORE: Final = re.compile(r"(?:\\not\s*|!|=/|/)=$")
"""``\\not =`` and the plain-text spellings of "not equal" (``!=``, ``=/=``, ``/=``) before a box."""
_WORD_BEFORE: Final = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789.")


def _command_head(text: str, opening: int, pairs: dict[int, int], closers: dict[int, int]) -> int:
    """Start of the command whose (last) argument opens at ``opening`` (``\\frac{1}{`` for ``\\frac{1}{x}``)."""
    floor = max(0, opening - CONTEXT_WINDOW)
    index = opening
    while index > floor and text[index - 1] in "}]":
        if text[index - 1] == "}" and (index - 1) in closers:
            index = closers[index - 1]
        elif text[index - 1] == "]":
            bracket = text.rfind("[", floor, index - 1)
            if bracket < 0:
                break
            index = bracket
        else:
            break
    name = _COMMAND_BEFORE.search(text, max(floor, index - 256), index)
    return name.start() if name else index


def _layout_start(text: str, floor: int, begin: int) -> int:
    """Where the spaces, line breaks, ``~``, ``$``, math delimiters (``\\[``, ``\\)``) and thin spaces
    (``\\,``) just before ``begin`` start: a sign at the end of the line before a displayed box
    (``x = -`` then ``\\[\\boxed{42}\\]``) is still written against it, across a mark that points to the box."""
    index = begin
    while index > floor:
        char = text[index - 1]
        if char in " \t\r\n~$" or char in _POINTING_CHARACTERS:
            index -= 1  # a mark that points to the box does not part it from a sign before: "$x = -$ \U0001f3af"
        elif char in ",;:!()[]" and index - 2 >= floor and text[index - 2] == "\\":
            index -= 2
        else:
            break
    return index


def _untied_tilde(text: str, floor: int, kept: int, begin: int) -> int | None:
    """Where a ``~`` in the layout ``text[kept:begin]`` before a box stands, when nothing is tied on
    its left (:func:`~handlers.grading.tokens.tilde_untied_on_left`): there it means "about"
    (``is ~\\boxed{42}``, ``$=~\\boxed{42}$``), never LaTeX's tie (``Hence~\\boxed{42}``)."""
    tilde = text.find("~", kept, begin)
    return tilde if tilde >= 0 and tilde_untied_on_left(text, tilde, floor) else None


def _left_context(text: str, begin: int, pairs: dict[int, int], closers: dict[int, int]) -> int:
    """Where what is written against a box (or the command around it) begins, reading left; no
    further back than :data:`CONTEXT_WINDOW` (a formula that runs further is taken whole up to there)."""
    floor = max(0, begin - CONTEXT_WINDOW)
    while begin > floor:
        kept = _layout_start(text, floor, begin)
        about = _untied_tilde(text, floor, kept, begin)
        if about is not None:
            return about  # "~\boxed{42}": the tilde is read with the box, as "about"
        spaced = kept != begin
        if kept == floor:
            return begin if floor == 0 else floor
        last = text[kept - 1]
        letters = kept
        while letters > floor and text[letters - 1].isascii() and text[letters - 1].isalpha():
            letters -= 1
        if letters < kept and letters > floor and text[letters - 1] == "\\":
            if text[letters:kept] in _LEFT_BOUNDARY_COMMANDS and not _sign_before_space(text, floor, letters - 1):
                return begin
            begin = letters - 1
        elif last.isalnum() and not spaced:
            word = kept
            while word > floor and text[word - 1] in _WORD_BEFORE:
                word -= 1
            begin = word if word < kept else kept - 1
        elif last == ">" and _QUOTE_MARKER.fullmatch(text, text.rfind("\n", 0, kept - 1) + 1, kept):
            return begin  # "> \boxed{5}": a blockquote's marker, layout, not "greater than"
        elif last in _SPACED_LEFT or (last in _GLUED_LEFT and not spaced):
            begin = kept - 1
        elif last == "=" and (negated := _NOT_EQUALS_BEFORE.search(text, max(floor, kept - 64), kept)):
            begin = negated.start()
        elif last == "}" and not spaced and (kept - 1) in closers:
            begin = _command_head(text, closers[kept - 1], pairs, closers)
        elif last in "([":
            begin = kept - 1  # -(\boxed{21}): the bracket, and what is before it, belong to the box
        elif last == "{" and kept - 2 >= floor and text[kept - 2] == "\\":
            begin = kept - 2  # \{\boxed{42}\} is the set {42}
        elif last.isdigit() and _THIN_SPACES.fullmatch(text, kept, begin):
            begin = kept - 1  # 1\,\boxed{042} is drawn 1 042, one number
        elif last == "," and kept - 2 >= floor and text[kept - 2].isdigit():
            begin = kept - 1  # 1,\boxed{042} is drawn 1,042, and (1, \boxed{42}) is a pair
        else:
            return begin
    return begin


_THIN_SPACES: Final = re.compile(r"(?:\\[,;:!])+")
_QUOTE_MARKER: Final = re.compile(r"[ \t]*(?:>[ \t]*)+")
"""The start of a Markdown blockquote's line, up to its last ``>``."""


def _sign_before_space(text: str, floor: int, command: int) -> bool:
    """Whether the command at ``command`` is a wide space (``\\quad``) or ``\\therefore`` right after a sign or a
    relation: ``-\\quad\\boxed{21}`` is drawn -  21, so the space does not part the sign from the box."""
    if text[command : command + 5] not in ("\\quad", "\\qqua") and not text.startswith("\\therefore", command):
        return False  # "$x = -$ $\therefore$ $\boxed{42}$": a pointer no more parts a sign from the box than a space
    before = text[max(floor, command - 64) : command].rstrip(" $")
    return before[-1:] in _SPACED_LEFT or _OPERATOR_COMMAND_AT_END.search(before) is not None


_OPERATOR_COMMAND_AT_END: Final = re.compile(
    r"\\(?:ge|le|geq|leq|geqslant|leqslant|ne|neq|cdot|times|pm|mp|div|approx|sim|simeq|cong|equiv|propto|lt|gt)\s*\Z")


def _open_brackets(text: str) -> int:
    """How many ``(`` and ``[`` written before a box are left open there (escaped ones aside)."""
    plain = re.sub(r"\\.", "", text)
    return max(0, plain.count("(") + plain.count("[") - plain.count(")") - plain.count("]"))


def _closed_brackets(text: str, end: int, count: int, pairs: dict[int, int]) -> int:
    """Past the ``count`` closing brackets after a box whose left context opened them, and what is
    written against them (``-(\\boxed{21})^2``); a bracket left open makes the answer unreadable."""
    ceiling = min(len(text), end + CONTEXT_WINDOW)
    while count and end < ceiling:
        spacing = _SPACING.match(text, end, ceiling)
        after = spacing.end() if spacing else end
        if after >= ceiling or text[after] not in ")]":
            break
        count -= 1
        end = _right_context(text, after + 1, pairs)
    return end


def _right_context(text: str, end: int, pairs: dict[int, int]) -> int:
    """Where what is written against a box ends, reading right; no further than
    :data:`CONTEXT_WINDOW` (a formula that runs further is taken whole up to there)."""
    ceiling = min(len(text), end + CONTEXT_WINDOW)
    while end < ceiling:
        spacing = _SPACING.match(text, end, ceiling)
        after = spacing.end() if spacing else end
        if after >= len(text) or text[after] == "\n":
            return end
        if after >= ceiling:
            return ceiling
        if text.startswith("**", after) or text.count("\n", end, after) > 1:
            return end  # Markdown bold, or a blank line: a new paragraph, not more of the formula
        char = text[after]
        command = _COMMAND_AT.match(text, after, ceiling)
        if command:
            if command.group(1) in _RIGHT_BOUNDARY_COMMANDS:
                return end
            end = command.end()
            while end < ceiling and text[end] in "{[":
                if text[end] == "{" and end in pairs:
                    end = pairs[end] + 1
                elif text[end] == "[" and (bracket := text.find("]", end, ceiling)) >= 0:
                    end = bracket + 1
                else:
                    break
        elif char in _SPACED_RIGHT or char.isdigit() or (after == end and (char in _GLUED_RIGHT or char.isalnum())):
            end = after + 1
            if char.isalnum():  # the rest of a glued word or number at once, not a character a turn
                while end < ceiling and text[end].isalnum():
                    end += 1
        elif after == end and char == "." and text[after + 1 : after + 2] in _DIGITS_OR_DOT:
            end = after + 1  # 4.2 after \boxed{4}, or an ellipsis
        else:
            return end
    return min(end, len(text))

