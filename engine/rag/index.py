"""Ranking within one library: BM25, dense cosine, and reciprocal-rank fusion."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Literal

import numpy as np

from engine.rag.bm25 import BM25Index
from engine.rag.embedder import Embedder
from engine.rag.harvest import DocEntry
from engine.rag.store import StoredLibrary
from engine.rag.text import bm25_text, tokenize

Mode = Literal["fused", "bm25", "dense"]

RRF_K: Final = 60
_CANDIDATES: Final = 100
_DENSE_WEIGHT: Final = 1.0


@dataclass(frozen=True)
class Hit:
    """One retrieved entry with its fused score and the ranks that produced it."""

    entry: DocEntry
    score: float
    bm25_rank: int | None
    dense_rank: int | None


class LibraryIndex:
    """The searchable form of one stored library."""

    def __init__(self, stored: StoredLibrary) -> None:
        self.library = stored.manifest.library
        self.entries = stored.entries
        self.embeddings = stored.embeddings
        self.bm25 = BM25Index([bm25_text(e) for e in stored.entries], tokenize)

    def search(
        self, query: str, top_k: int, embedder: Embedder | None, mode: Mode = "fused"
    ) -> list[Hit]:
        """The best ``top_k`` entries; dense ranking needs both embedder and vectors."""
        lexical = _top(self.bm25.scores(query), _CANDIDATES) if mode != "dense" else []
        dense: list[int] = []
        if mode != "bm25" and embedder is not None and self.embeddings is not None:
            query_vec = embedder.encode([query])[0]
            dense = _top(self.embeddings @ query_vec, _CANDIDATES, positive_only=False)
        fused: dict[int, float] = {}
        for rank, row in enumerate(lexical):
            fused[row] = fused.get(row, 0.0) + 1.0 / (RRF_K + rank + 1)
        for rank, row in enumerate(dense):
            fused[row] = fused.get(row, 0.0) + _DENSE_WEIGHT / (RRF_K + rank + 1)
        lex_rank = {row: r for r, row in enumerate(lexical)}
        dense_rank = {row: r for r, row in enumerate(dense)}
        best = sorted(fused, key=lambda row: (-fused[row], row))[:top_k]
        return [
            Hit(self.entries[row], fused[row], lex_rank.get(row), dense_rank.get(row))
            for row in best
        ]


def _top(scores: np.ndarray, n: int, positive_only: bool = True) -> list[int]:
    """Row indices of the ``n`` highest scores, best first (ties by row)."""
    if scores.size == 0:
        return []
    n = min(n, scores.size)
    part = np.argpartition(-scores, n - 1)[:n]
    ordered = sorted(part.tolist(), key=lambda row: (-float(scores[row]), row))
    return [row for row in ordered if not positive_only or scores[row] > 0]
