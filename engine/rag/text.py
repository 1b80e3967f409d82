"""Turn doc entries into the texts each index sees, and tokenize for BM25."""

from __future__ import annotations

import re
from typing import Final

from engine.rag.harvest import DocEntry

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_SIG_LINE = re.compile(r"^\s*[\w.]+\(.*\)\s*$")
_STOPWORDS: Final = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "can",
        "for",
        "from",
        "has",
        "have",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "their",
        "then",
        "there",
        "these",
        "this",
        "those",
        "to",
        "was",
        "were",
        "which",
        "will",
        "with",
        "you",
        "your",
        "how",
        "what",
        "when",
        "where",
        "do",
        "does",
        "i",
        "we",
        "use",
        "using",
    ]
)
_BM25_DOC_CHARS: Final = 2500
_SUMMARY_CHARS: Final = 400


def tokenize(text: str) -> list[str]:
    """Lowercased, lightly stemmed tokens; identifiers also yield their parts."""
    tokens: list[str] = []
    for ident in _IDENT.findall(text):
        parts = [p.lower() for piece in ident.split("_") for p in _CAMEL.findall(piece)]
        whole = ident.lower().strip("_")
        if len(parts) > 1 and whole:
            tokens.append(whole)
        tokens.extend(_stem(p) for p in parts if p not in _STOPWORDS)
    return tokens


def _stem(word: str) -> str:
    """A deliberately crude suffix stripper: enough to match plural and verb forms."""
    if len(word) <= 3 or word.isdigit():
        return word
    if word.endswith("ies") and len(word) > 4:
        word = word[:-3] + "y"
    elif word.endswith("sses"):
        word = word[:-2]
    elif word.endswith("ing") and len(word) >= 6:
        word = word[:-3]
    elif word.endswith("ed") and len(word) >= 5:
        word = word[:-2]
    elif word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if word.endswith("e") and len(word) > 3:
        word = word[:-1]
    return word


def summary(entry: DocEntry) -> str:
    """The first paragraph of the docstring, skipping a leading signature line."""
    paragraphs = [p.strip() for p in entry.doc.split("\n\n") if p.strip()]
    if paragraphs and _SIG_LINE.match(paragraphs[0].splitlines()[0]):
        rest = paragraphs[0].partition("\n")[2]
        paragraphs[0] = rest.strip()
        if not paragraphs[0]:
            paragraphs.pop(0)
    text = " ".join(paragraphs[0].split()) if paragraphs else ""
    return text[:_SUMMARY_CHARS]


def short_name(entry: DocEntry) -> str:
    """The name a user would type: the last one or two components of the best path."""
    best = min((entry.name, *entry.aliases), key=len)
    parts = best.split(".")
    keep = 2 if entry.kind == "method" and len(parts) > 2 else 1
    return ".".join(parts[-keep:])


def bm25_text(entry: DocEntry) -> str:
    """Lexical text: names weighted by repetition, the summary twice, then the doc."""
    names = " ".join((entry.name, *entry.aliases))
    short = short_name(entry)
    head = summary(entry)
    body = entry.doc[:_BM25_DOC_CHARS]
    return f"{short} {short} {short} {names} {head} {head} {body}"


def embed_text(entry: DocEntry) -> str:
    """Dense text: a readable name and the summary, short enough for a small model."""
    words = " ".join(_CAMEL.findall(short_name(entry).replace("_", " ").replace(".", " ")))
    return f"{entry.library} {words}: {summary(entry)}"
