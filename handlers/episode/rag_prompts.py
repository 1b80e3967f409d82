"""Chat messages for the optional query-rewrite and answer-summary model calls of local_rag.

Pure functions of the recorded events, so replay renders the same text.
"""

from __future__ import annotations

from typing import Final

from events.model import ChatMessage

_REWRITE_SYSTEM: Final = (
    "You turn a question about a Python library into a short documentation search "
    "query. Name the operation and the mathematical objects involved, as the "
    "library's own documentation would phrase them (for example 'compute "
    "eigenvalues of a matrix' rather than a description of the user's problem). "
    "Drop numbers, variable names and story details. Reply with the query on one "
    "line and nothing else. If the question is already such a query, reply with an "
    "empty line."
)

_SUMMARY_SYSTEM: Final = (
    "You are given a question and excerpts from a library's documentation. Write "
    "a brief, self-contained note that answers the question from the excerpts only: "
    "which function or class to use (with its full name), its signature, the "
    "arguments that matter here, and a one- or two-line usage example if the "
    "excerpts show one. Do not invent functions that are not in the excerpts. If "
    "the excerpts do not answer the question, reply with an empty line."
)


def rewrite_messages(query: str, library: str) -> list[ChatMessage]:
    """Messages asking a model to turn ``query`` into a doc-search query for ``library``."""
    return [
        ChatMessage(role="system", content=_REWRITE_SYSTEM),
        ChatMessage(role="user", content=f"Library: {library}\nQuestion:\n{query}"),
    ]


def summary_messages(query: str, hits_text: str) -> list[ChatMessage]:
    """Messages asking a model to condense rendered hits into an answer to ``query``."""
    return [
        ChatMessage(role="system", content=_SUMMARY_SYSTEM),
        ChatMessage(role="user", content=f"Question:\n{query}\n\nDocumentation excerpts:\n{hits_text}"),
    ]


def clean_rewrite(reply: str) -> str:
    """The first non-empty line of a rewrite reply, without think blocks or quotes."""
    for line in without_think(reply).splitlines():
        line = line.strip().strip("\"'` ")
        if line:
            return line
    return ""


def clean_summary(reply: str) -> str:
    """A summary reply without its think block; empty when the model found nothing."""
    return without_think(reply).strip()


def without_think(reply: str) -> str:
    """The part of a reply after its reasoning (an unclosed think block counts as all reasoning)."""
    if "</think>" in reply:
        return reply.rsplit("</think>", 1)[1]
    return "" if "<think>" in reply else reply
