"""Model roles that are not episode actors.

Calls made for these roles serve a step of an episode (they share its episode id and
step number) but are not turns of it: the episode projection never makes them steps.
"""

from __future__ import annotations

from typing import Final

RAG_REWRITER: Final = "rag_rewriter"
"""Turns a local_rag query into a documentation search query."""
RAG_SUMMARIZER: Final = "rag_summarizer"
"""Condenses local_rag hits into a short note for the policy."""
HELPER_ROLES: Final = frozenset({RAG_REWRITER, RAG_SUMMARIZER})
