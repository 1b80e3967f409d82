"""NATS subject wildcard matching: the in-memory log's filters, and whether a filter covers another."""

from __future__ import annotations

from collections.abc import Sequence


def subject_matches(pattern: str, subject: str) -> bool:
    """True when ``subject`` matches ``pattern`` (``*`` one token, ``>`` the rest)."""
    pat = pattern.split(".")
    sub = subject.split(".")
    for index, token in enumerate(pat):
        if token == ">":
            return len(sub) > index
        if index >= len(sub):
            return False
        if token not in ("*", sub[index]):
            return False
    return len(pat) == len(sub)


def filter_covers(filters: Sequence[str], wanted: str) -> bool:
    """Whether a consumer filtered by ``filters`` receives every subject ``wanted`` matches
    (a filter's wildcard covers the same wildcard, a literal token only itself)."""
    return any(subject_matches(pattern, wanted) for pattern in filters)
