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

A reader does not read a box alone: what is written against it (:func:`in_context`) and the
sentence it stands in (:func:`in_sentence`) are returned with it, so ``It is not \\boxed{42}``
and ``\\boxed{42} thousand`` reach the grader whole and never read as 42.
"""

from __future__ import annotations

import re
from typing import Final

from handlers.grading.tokens import tilde_untied_on_left

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
_BOX_START = re.compile(r"\\(?:boxed|fbox|framebox|bbox)\s*(?:\[[^\]\n]*\]\s*)*\{")
"""A box that marks a final answer: ``\\boxed``, ``\\fbox``, ``\\framebox[...]`` and MathJax's ``\\bbox[...]``."""
_ANY_BOX = re.compile(
    r"\\(?:boxed|fbox|framebox|bbox)(?![A-Za-z])\s*(?:\[[^\]\n]*\]\s*)*"
    r"(?:(?P<brace>\{)|(?P<token>\\[A-Za-z]+|[^\s{}\\]))"
)
_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_IFFALSE = re.compile(r"\\iffalse(?![A-Za-z]).*?(?:\\fi(?![A-Za-z])|\Z)", re.DOTALL)
_LATEX_COMMENT = re.compile(r"(?<![\\\d])(?<!\d )%[^\n]*")
_PHANTOM = re.compile(r"\\(?:[hv]?phantom|textcolor\s*\{\s*white\s*\})\s*\{")
_WHITE_GROUP = re.compile(r"\{\s*\\color\s*\{\s*white\s*\}")
_HIDDEN_HTML = re.compile(
    r"<(\w+)[^<>]*(?:\bhidden\b|display\s*:\s*none|visibility\s*:\s*hidden)[^<>]*>.*?(?:</\1\s*>|\Z)",
    re.IGNORECASE | re.DOTALL,
)


def extract_final_answer(text: str) -> str | None:
    """The final answer of ``text`` by the rules in the module docstring, stripped."""
    visible = mask_hidden(mask_reasoning_and_tools(text))
    body = _last_answer_body(visible)
    region = body if body is not None else _CODE_FENCE.sub("\n", visible)
    pairs = _brace_pairs(region)
    spans = top_level_box_spans(region, pairs)
    if len(spans) > MAX_FINAL_BOXES:
        return TOO_MANY_BOXES
    outer = _outermost_enclosing(region, pairs, [span[0] for span in spans])
    closers = {c: o for o, c in pairs.items()}
    bounds = [context_bounds(region, span, pairs, closers, enclosing)
              for span, enclosing in zip(spans, outer, strict=True)]
    answers = [in_context(region, span, where) for span, where in zip(spans, bounds, strict=True)]
    if len({" ".join(answer.split()) for answer in answers}) > 1:
        return " ".join(f"\\boxed{{{answer.strip()}}}" for answer in answers)
    if answers:
        return _non_empty(in_sentence(region, bounds[-1], answers[-1]))
    return _non_empty(body)


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
    "therefore", "because", "to", "displaystyle", "textstyle", "left", "big", "Big", "bigg", "Bigg",
    "hence", "thus", "colon",
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

_SENTENCE_END: Final = re.compile(r"\n|[.!?](?=\s|$)|</answer>", re.IGNORECASE)
_MATH_DELIMITERS: Final = re.compile(r"\$+|\\[()\[\]]")
_CLOSING_PHRASE: Final = re.compile(
    r"(?:(?:which|this|that|it)\s+)?(?:is|are|was|would\s+be|will\s+be|as)\s+(?:the|my|our)\s+"
    r"(?:final\s+|correct\s+|required\s+)?(?:answer|result|solution)s?",
    re.IGNORECASE,
)
"""Words after a final box that only announce it (``\\boxed{42} is the final answer``): a closed list."""
_DENYING: Final = re.compile(
    r"\b(?:not|no|never|nor|neither|none|nobody|nothing|cannot|\w+n't|if|unless|were|maybe|perhaps|"
    r"instead|rather|except|excluding|without|almost|nearly|about|around|roughly|over|under|above|below|old|former|"
    r"less|more|least|most|than|minus|negative|plus|times|twice|double|triple|half|third|quarter|"
    r"squared|cubed|reciprocal|inverse|opposite|claim\w*|\w*(?:wrong|incorrect|mistak|false|error|erroneous|"
    r"untrue|bogus|invalid|accura|suppos|alleg|reported|apparent|previous|earlier|original|initial|"
    r"tentativ|prelim|candidate|possib|might|could|assum|hypothe|imagin|pretend|guess|doubt|likely|approx|exceed|"
    r"percent|fraction|portion|multiple)\w*)\b",
    re.IGNORECASE,
)
"""Words and stems that deny, suppose or change a value, looked for in the whole sentence before a
final box (``It is not \\boxed{42}``, ``Wrongly, we get \\boxed{42}``, ``at most \\boxed{42}``). A
closed list that is never complete: :data:`_ANNOUNCING` is what makes the clause next to the box sound."""
_ANNOUNCING: Final = frozenset({
    "the", "a", "an", "final", "answer", "answers", "result", "results", "total", "value", "sum", "solution",
    "is", "are", "was", "be", "will", "would", "equals", "equal_to", "amounts_to", "comes_to", "of",
    "we", "i", "you", "it", "this", "that", "which", "she", "he", "they", "our", "my", "its", "their",
    "get", "gets", "got", "obtain", "obtains", "obtained", "find", "finds", "found", "have", "has", "had",
    "make", "makes", "made", "give", "gives", "gave", "yield", "yields", "become", "becomes", "is:",
    "therefore", "thus", "so", "hence", "then", "now", "and", "required", "desired", "number",
    "**", "*", "=", "boxed", "final_answer",
})
"""Every word the clause right before a final box may hold (it starts at the sentence or at the last
comma, colon, semicolon or ``so``/``therefore``...): a closed list, so a clause that says anything else
(``It is mistakenly``, ``Janet makes``) is read with the answer and makes it unreadable."""
_COPULAS: Final = frozenset({
    "is", "are", "was", "equals", "equal_to", "amounts_to", "comes_to", "be", "=", "is:", "are:", "get", "gets",
    "got", "obtain", "obtains", "obtained", "find", "finds", "found", "yields", "gives", "makes", "made", "has",
    "have", "had", "totals", "becomes", "answer:", "result:",
})
"""Verbs that may stand right before a final box after a short subject (``the area is``)."""
_SUBJECT_WORDS: Final = 8
"""At most this many words of subject before such a verb: a longer clause is prose, not a subject."""
_JOINED_PHRASES: Final = ((re.compile(r"\b(equals?|amounts|comes)\s+to\b", re.IGNORECASE), r"\1_to"),
                          (re.compile(r"\bfinal\s+answer\b", re.IGNORECASE), "final_answer"))
_CLAUSE_BREAK: Final = re.compile(r",(?!\d)|[;:]|\b(?:so|therefore|thus|hence)\b", re.IGNORECASE)
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
    stop = _SENTENCE_END.search(text, end, end + CONTEXT_WINDOW)
    after = text[end : stop.start() if stop else min(len(text), end + CONTEXT_WINDOW)]
    after = _MATH_DELIMITERS.sub(" ", after).strip()
    joined, later = _split_clause(after)
    if not joined.strip(" .,;!)]") or _CLOSING_PHRASE.fullmatch(joined.strip(" .,;!")):
        joined = ""
    after = " ".join(part for part in (joined, later if _DENYING.search(later) else "") if part)
    sentence = text[_sentence_start(text, begin) : begin]
    if len(sentence) >= CONTEXT_WINDOW:
        return LONG_SENTENCE
    before = _MATH_DELIMITERS.sub(" ", sentence)
    clause = _CLAUSE_BREAK.split(_prose_only(sentence))[-1]
    lead = before.strip() if _DENYING.search(before) or not _only_announces(clause) else ""
    if not (after or lead):
        return answer
    return " ".join(part for part in (lead, "{" + answer.strip() + "}", after) if part)


_MATH_SEGMENT: Final = re.compile(r"\$\$.*?\$\$|\$.*?\$|\\\(.*?\\\)|\\\[.*?\\\]", re.DOTALL)
_MATH_OPENED: Final = re.compile(r"(?:\$\$?|\\[(\[]).*\Z", re.DOTALL)


def _prose_only(sentence: str) -> str:
    """``sentence`` without its formulas (closed ones, and the one the box itself stands in):
    ``3 + 2 =`` before a box is a computation, read by the grader's context rules, not prose."""
    return _MATH_OPENED.sub(" ", _MATH_SEGMENT.sub(" ", sentence))


def _only_announces(clause: str) -> bool:
    """Whether ``clause`` only announces the box after it: every word is in :data:`_ANNOUNCING` or a
    one-letter name (``x =``), or a short subject is followed by a verb from :data:`_COPULAS` right
    before the box (``the product is``, ``Janet makes``). Markdown emphasis is ignored."""
    for pattern, joined in _JOINED_PHRASES:
        clause = pattern.sub(joined, clause)
    words = re.findall(r"[^\s*_~`#>]+(?:_[a-z]+)*", clause.replace("**", " "))
    bare = [word.lower().strip(".!?\"'()[]") for word in words]
    if all(word in _ANNOUNCING or (len(word) == 1 and word.isalpha()) for word in bare):
        return True
    return bare[-1] in _COPULAS and len(bare) <= _SUBJECT_WORDS + 1


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
        start = match.end()
    opening = text.lower().rfind("<answer>", floor, begin)
    return max(start, opening + len("<answer>") if opening >= 0 else 0)


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
    return _left_context(text, begin, pairs, closers), _right_context(text, end, pairs)


_COMMAND_BEFORE: Final = re.compile(r"\\[A-Za-z]+\*?\s*$")
_COMMAND_AT: Final = re.compile(r"\\([A-Za-z]+\*?|.)")
_NOT_EQUALS_BEFORE: Final = re.compile(r"\\not\s*=$")
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
    """Where the spaces, ``~``, ``$`` and thin spaces (``\\,``) just before ``begin`` start."""
    index = begin
    while index > floor:
        char = text[index - 1]
        if char in " \t~$":
            index -= 1
        elif char in ",;:!" and index - 2 >= floor and text[index - 2] == "\\":
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
            if text[letters:kept] in _LEFT_BOUNDARY_COMMANDS:
                return begin
            begin = letters - 1
        elif last.isalnum() and not spaced:
            word = kept
            while word > floor and text[word - 1] in _WORD_BEFORE:
                word -= 1
            begin = word if word < kept else kept - 1
        elif last in _SPACED_LEFT or (last in _GLUED_LEFT and not spaced):
            begin = kept - 1
        elif last == "=" and (negated := _NOT_EQUALS_BEFORE.search(text, max(floor, kept - 64), kept)):
            begin = negated.start()
        elif last == "}" and not spaced and (kept - 1) in closers:
            begin = _command_head(text, closers[kept - 1], pairs, closers)
        else:
            return begin
    return begin


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

