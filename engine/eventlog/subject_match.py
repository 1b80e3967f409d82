"""NATS subject wildcard matching, for the in-memory log."""

from __future__ import annotations


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
