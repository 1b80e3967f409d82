"""Shared fixtures: one real embedder and one small KB (stdlib libraries) per session."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from engine.rag.embedder import EmbedderUnavailable, load_embedder
from engine.rag.kb import KnowledgeBase

SMALL_LIBRARIES = ("math", "cmath", "fractions", "itertools")


class HashEmbedder:
    """A deterministic stand-in embedder: bag of hashed words, normalised."""

    name = "hash-test"

    def encode(self, texts):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                out[row, hash(word) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.maximum(norms, 1e-9)


@pytest.fixture(scope="session")
def embedder():
    """The bundled MiniLM model, or a hash embedder when it cannot load here."""
    try:
        return load_embedder()
    except EmbedderUnavailable:
        return HashEmbedder()


@pytest.fixture(scope="session")
def small_kb_dir(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    """A data dir with the four stdlib libraries built once."""
    data_dir = tmp_path_factory.mktemp("rag-kb")
    kb = KnowledgeBase(data_dir, embedder=embedder)
    for library in SMALL_LIBRARIES:
        kb.index(library)
    return data_dir


@pytest.fixture
def small_kb(small_kb_dir: Path, embedder) -> KnowledgeBase:
    """A fresh KnowledgeBase over the prebuilt small data dir."""
    return KnowledgeBase(small_kb_dir, embedder=embedder)
