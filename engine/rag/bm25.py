"""Okapi BM25 over a sparse term-document matrix (numpy + scipy, no extra package)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from scipy import sparse


class BM25Index:
    """Precomputes every document's per-term BM25 weight, so a query is a column sum."""

    def __init__(
        self,
        docs: Sequence[str],
        tokenize: Callable[[str], list[str]],
        k1: float = 1.2,
        b: float = 0.75,
    ) -> None:
        self._tokenize = tokenize
        self.vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        for row, doc in enumerate(docs):
            for token in tokenize(doc):
                rows.append(row)
                cols.append(self.vocab.setdefault(token, len(self.vocab)))
        n_docs = len(docs)
        shape = (n_docs, max(len(self.vocab), 1))
        ones = np.ones(len(rows), dtype=np.float32)
        tf = sparse.csr_matrix((ones, (rows, cols)), shape=shape, dtype=np.float32)
        tf.sum_duplicates()
        lengths = np.asarray(tf.sum(axis=1)).ravel()
        avg = float(lengths.mean()) if n_docs else 1.0
        df = np.bincount(tf.indices, minlength=shape[1]).astype(np.float32)
        idf = np.log1p((n_docs - df + 0.5) / (df + 0.5)).astype(np.float32)
        norm = k1 * (1.0 - b + b * lengths / max(avg, 1e-9))
        row_of = np.repeat(np.arange(n_docs), np.diff(tf.indptr))
        data = tf.data * (k1 + 1.0) / (tf.data + norm[row_of]) * idf[tf.indices]
        weights = sparse.csr_matrix((data.astype(np.float32), tf.indices, tf.indptr), shape=shape)
        self._weights = weights.tocsc()
        self.n_docs = n_docs

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every document for ``query`` (zeros when no term is known)."""
        columns = [self.vocab[t] for t in dict.fromkeys(self._tokenize(query)) if t in self.vocab]
        if not columns:
            return np.zeros(self.n_docs, dtype=np.float32)
        return np.asarray(self._weights[:, columns].sum(axis=1)).ravel()
