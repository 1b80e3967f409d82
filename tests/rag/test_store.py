"""Building, storing, versioning and rebuilding library knowledge bases."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.rag import store
from engine.rag.kb import KnowledgeBase
from engine.rag.libraries import spec_for


def test_build_records_library_version_and_embedder(small_kb_dir: Path, embedder) -> None:
    """The manifest names the version and embedder the stored KB was built from."""
    manifest = json.loads((small_kb_dir / "fractions" / "manifest.json").read_text())
    assert manifest["library"] == "fractions"
    assert manifest["version"].startswith("python-")
    assert manifest["embedder"] == embedder.name
    assert manifest["count"] > 0


def test_stored_embeddings_match_entries(small_kb_dir: Path) -> None:
    """Every stored entry has one embedding row."""
    stored = store.load(small_kb_dir, "math")
    assert stored is not None
    assert stored.embeddings is not None
    assert stored.embeddings.shape[0] == len(stored.entries)


def test_stored_kb_is_loaded_not_rebuilt(small_kb_dir: Path, embedder, monkeypatch) -> None:
    """A current stored KB is read from disk without harvesting again."""
    monkeypatch.setattr(store, "harvest", _fail_harvest)
    kb = KnowledgeBase(small_kb_dir, embedder=embedder)
    assert kb.index("itertools").entries


def test_version_change_triggers_rebuild(tmp_path: Path, embedder, monkeypatch) -> None:
    """When the installed version differs from the manifest, the KB is rebuilt."""
    KnowledgeBase(tmp_path, embedder=embedder).index("fractions")
    monkeypatch.setattr(store, "installed_version", lambda spec: "99.0-test")
    KnowledgeBase(tmp_path, embedder=embedder).index("fractions")
    manifest = store.read_manifest(tmp_path, "fractions")
    assert manifest is not None
    assert manifest.version == "99.0-test"


def test_damaged_manifest_triggers_rebuild(tmp_path: Path, embedder) -> None:
    """An unreadable manifest is treated as missing and the KB is built again."""
    KnowledgeBase(tmp_path, embedder=embedder).index("fractions")
    (tmp_path / "fractions" / "manifest.json").write_text("{not json")
    index = KnowledgeBase(tmp_path, embedder=embedder).index("fractions")
    assert index.entries
    assert store.read_manifest(tmp_path, "fractions") is not None


def test_index_is_loaded_once_per_process(small_kb: KnowledgeBase) -> None:
    """Repeated lookups reuse the same in-memory index."""
    assert small_kb.index("math") is small_kb.index("math")


def test_harvest_skips_private_names() -> None:
    """No harvested entry is private or a test module."""
    from engine.rag.harvest import harvest

    names = [e.name for e in harvest(spec_for("fractions"))]
    assert "fractions.Fraction.limit_denominator" in names
    assert not [n for n in names if "._" in n or ".tests" in n]


def test_default_data_dir_is_under_user_data_dir() -> None:
    """Without a data dir the KB lives in the user's apollo data dir."""
    assert store.default_data_dir().parts[-2:] == ("apollo", "rag")


def _fail_harvest(spec):
    pytest.fail(f"unexpected rebuild of {spec.name}")
