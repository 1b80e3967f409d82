"""Ranking quality on the small KB, the library filter and the BM25 fallback."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from engine.rag import kb as kb_module
from engine.rag.bm25 import BM25Index
from engine.rag.embedder import EmbedderUnavailable
from engine.rag.kb import KnowledgeBase
from engine.rag.libraries import UnknownLibraryError
from engine.rag.text import tokenize


def _names(hits) -> list[str]:
    return [h.entry.name for h in hits]


@pytest.mark.parametrize(
    ("library", "query", "expected"),
    [
        ("math", "binomial coefficient", "math.comb"),
        ("math", "greatest common divisor", "math.gcd"),
        ("itertools", "cartesian product of iterables", "itertools.product"),
        (
            "fractions",
            "closest fraction with bounded denominator",
            "fractions.Fraction.limit_denominator",
        ),
        ("cmath", "phase of a complex number", "cmath.phase"),
    ],
)
def test_fused_search_finds_the_right_function(small_kb, library, query, expected) -> None:
    """A plain-language query ranks the function that answers it in the top 3."""
    assert expected in _names(small_kb.search(library, query, top_k=3))


def test_library_filter_keeps_hits_in_that_library(small_kb) -> None:
    """Searching one library never returns another library's entries."""
    for library in ("math", "itertools"):
        hits = small_kb.search(library, "permutations of items", top_k=5)
        assert hits
        assert {h.entry.library for h in hits} == {library}


def test_top_k_limits_the_number_of_hits(small_kb) -> None:
    """top_k caps the hit count."""
    assert len(small_kb.search("math", "logarithm", top_k=2)) == 2


def test_unknown_library_raises_a_clear_error(small_kb) -> None:
    """An unsupported library name is rejected with the supported list."""
    with pytest.raises(UnknownLibraryError, match="supported: sympy"):
        small_kb.search("pandas", "dataframe")


def test_bm25_mode_works_without_embeddings(small_kb_dir: Path) -> None:
    """With no embedder at all, retrieval is BM25 only and still finds answers."""
    kb = KnowledgeBase(small_kb_dir, embedder=None)
    hits = kb.search("math", "binomial coefficient", top_k=3)
    assert hits[0].entry.name == "math.comb"
    assert all(h.dense_rank is None for h in hits)


def test_unloadable_model_falls_back_to_bm25_with_warning(
    tmp_path: Path, monkeypatch, caplog
) -> None:
    """A model that fails to load is logged once and reported by status."""

    def broken():
        raise EmbedderUnavailable("OSError: no weights")

    monkeypatch.setattr(kb_module, "load_embedder", broken)
    kb = KnowledgeBase(tmp_path)
    with caplog.at_level(logging.WARNING):
        hits = kb.search("itertools", "running totals accumulate", top_k=3)
    assert "itertools.accumulate" in _names(hits)
    assert "falling back to BM25" in caplog.text
    status = kb.status()
    assert status["retrieval"] == "BM25 only"
    assert "no weights" in status["embedder_error"]


def test_bm25_ranks_the_document_with_rare_terms_first() -> None:
    """BM25 prefers the document that matches the rarer query terms."""
    index = BM25Index(["solve linear equations", "plot a graph", "linear regression fit"], tokenize)
    scores = index.scores("solve equations")
    assert scores.argmax() == 0
    assert index.scores("zzz").max() == 0


def test_tokenize_splits_identifiers_and_stems() -> None:
    """snake_case and CamelCase identifiers yield their parts; plurals match singulars."""
    tokens = tokenize("limit_denominator LUsolve equations")
    assert {"limit_denominator", "limit", "denominator", "equation"} <= set(tokens)
    assert tokenize("Equations") == tokenize("equation")
