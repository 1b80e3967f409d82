"""Render retrieved hits as the text the policy model reads."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from engine.rag.index import Hit

DOC_CHARS: Final = 700


def render_hits(hits: Sequence[Hit], doc_chars: int = DOC_CHARS) -> str:
    """Numbered hits: qualified name (and public aliases), signature, trimmed doc."""
    if not hits:
        return "No matching documentation found."
    return "\n\n".join(_render_one(i, hit, doc_chars) for i, hit in enumerate(hits, 1))


def _render_one(number: int, hit: Hit, doc_chars: int) -> str:
    entry = hit.entry
    lines = [f"[{number}] {entry.name} ({entry.kind})"]
    if entry.aliases:
        lines.append(f"also: {', '.join(entry.aliases[:3])}")
    if entry.kind != "module":
        lines.append(f"signature: {entry.signature}")
    lines.append(trim(entry.doc, doc_chars))
    return "\n".join(lines)


def trim(doc: str, limit: int) -> str:
    """Cut ``doc`` at a paragraph or line boundary near ``limit`` characters."""
    if len(doc) <= limit:
        return doc
    cut = doc[:limit]
    boundary = max(cut.rfind("\n\n"), cut.rfind("\n"))
    if boundary > limit // 2:
        cut = cut[:boundary]
    return cut.rstrip() + "\n..."
