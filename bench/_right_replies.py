"""Right replies written as models end their solutions: the grader's recall on whole replies.

``tests/grading/right_replies.jsonl.gz`` holds 2,664 replies, each giving its gold as the final
answer, in the closing styles of several model families (Qwen2.5-Math, DeepSeek-R1, QwQ,
Llama 3, GPT-4o Markdown, Minerva's few-shot format, GSM8K chain of thought, apollo's own
``<answer>`` protocol...), over golds and questions from the benchmark files in shared/data.
They were written for this project without reading the grader's rules or tests, so a reply
the grader refuses is a false negative it was not tuned away from. Replies with neither a
``\\boxed{}`` nor an ``<answer>`` block (the Minerva and GSM8K styles) are counted apart: the
grader reads a final answer only from those, on purpose.
"""

from __future__ import annotations

import collections
import gzip
import json
import re
from pathlib import Path
from typing import NamedTuple

from handlers.domains.informal_math import MATH
from handlers.grading import grade_answer

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "grading" / "right_replies.jsonl.gz"
SECOND_CORPUS = CORPUS.with_name("right_replies_second.jsonl.gz")
"""1,500 more, in 30 other styles (Claude, Gemini, Mistral, Phi, DeepSeek-V3, Qwen3, o1, Llama 3.1, Gemma, Yi,
InternLM, NuminaMath, Markdown tables, closing lines, five other languages...), written later by another writer
who also read no grader code. Half of it was kept unseen while the rules were mended against the other half."""
THIRD_CORPUS = CORPUS.with_name("right_replies_third.jsonl.gz")
"""1,200 more, in 40 styles a third writer chose blind to the grader (Italian, Portuguese, Japanese and Korean
endings, worked steps with boxed intermediate results, an approximation beside the exact answer, align blocks,
check marks and arrows, JSON and GSM8K ``####`` lines...). Measured unseen first: 259 of its 807 replies with a
box or an answer block were refused; the rules were then mended against all of it. Golds that the data files hold
as numbers (AMC's ``27.0``) are written as text."""
FOURTH_CORPUS = CORPUS.with_name("right_replies_fourth.jsonl.gz")
"""1,200 more, in 40 styles a fourth writer chose blind to the grader (Dutch, Swedish, Polish, Ukrainian, Turkish,
Vietnamese, Indonesian, Arabic and Hindi endings, ``$\\blacksquare$`` after the box, emoji around it, ``\\therefore``
before it, the question quoted before it, an answer first with its working after...). Measured unseen first: 529 of
its 930 replies with a box or an answer block were refused; the rules were then mended against all of it."""
_MARKED = re.compile(r"\\boxed\s*\{|<answer>", re.IGNORECASE)


class Refused(NamedTuple):
    """A right reply the grader scored 0."""

    style: str
    gold: str
    reply: str
    read: str | None


class Recall(NamedTuple):
    """False negatives over the corpus, with and without a box or an answer block."""

    marked: int
    unmarked: int
    refused_marked: list[Refused]
    refused_unmarked: int
    per_style: dict[str, tuple[int, int]]
    """Style -> (replies, refused)."""


def load(corpus: Path = CORPUS) -> list[dict[str, str]]:
    with gzip.open(corpus, "rt", encoding="utf-8") as lines:
        return [json.loads(line) for line in lines if line.strip()]


def score(reply: str, gold: str, mode: str = "math", question: str | None = None) -> tuple[float, str | None]:
    """The reply's grade as a grading worker gives it: apollo's grader reads the final answer first;
    ``math_verify`` is given the whole reply, which its own parser searches. ``question``: the problem's, as an
    episode hands it over (the second corpus has it; the first does not)."""
    try:
        if mode != "math":
            return grade_answer(reply, gold, mode).score, None
        answer = MATH.final_answer(reply, None, question)  # as an episode's decider reads it
        return (grade_answer(answer, gold, question=question).score if answer is not None else 0.0), answer
    except Exception:  # noqa: BLE001 - a grader that raises scores 0, as a grading worker reports it
        return 0.0, None


def recall(rows: list[dict[str, str]], mode: str = "math") -> Recall:
    refused: list[Refused] = []
    unmarked = refused_unmarked = 0
    styles: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0])
    for row in rows:
        points, read = score(row["reply"], row["gold"], mode, row.get("question"))
        marked = bool(_MARKED.search(row["reply"]))
        unmarked += not marked
        styles[row["style"]][0] += 1
        if points == 1:
            continue
        styles[row["style"]][1] += 1
        if marked:
            refused.append(Refused(row["style"], row["gold"], row["reply"], read))
        else:
            refused_unmarked += 1
    per_style = {style: (n, bad) for style, (n, bad) in sorted(styles.items())}
    return Recall(len(rows) - unmarked, unmarked, refused, refused_unmarked, per_style)


def report(modes: tuple[str, ...] = ("math_verify", "math")) -> None:
    """Print each grader's false negatives on each corpus, per style."""
    for corpus in (CORPUS, SECOND_CORPUS, THIRD_CORPUS, FOURTH_CORPUS):
        _report(corpus, modes)


def _report(corpus: Path, modes: tuple[str, ...]) -> None:
    rows = load(corpus)
    where = corpus.relative_to(corpus.parents[2])
    print(f"{len(rows)} right replies from {where} (written without reading the grader)")
    for mode in modes:
        found = recall(rows, mode)
        print(f"{mode:12s} false negatives: {len(found.refused_marked)}/{found.marked} replies with a box or an answer "
              f"block ({len(found.refused_marked) / found.marked:.1%}), {found.refused_unmarked}/{found.unmarked} "
              f"without ({found.refused_unmarked / max(1, found.unmarked):.1%})")
        print("   " + ", ".join(f"{style} {bad}/{n}" for style, (n, bad) in found.per_style.items()))
