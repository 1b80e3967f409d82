"""The knowledge base: lazily builds or loads each library once and serves searches.

All methods are blocking (imports, disk, torch); async callers run them in a thread.
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from typing import Any

from engine.rag.embedder import Embedder, EmbedderUnavailable, load_embedder
from engine.rag.index import Hit, LibraryIndex, Mode
from engine.rag.libraries import SUPPORTED_LIBRARIES, installed_version, spec_for
from engine.rag.store import Progress, build, default_data_dir, is_current, load, read_manifest

log = logging.getLogger(__name__)

_UNSET: Any = object()


class KnowledgeBase:
    """Per-library indexes under ``data_dir``, rebuilt when a library version changes."""

    def __init__(
        self, data_dir: Path | None = None, embedder: Embedder | None = _UNSET, progress: Progress | None = None
    ) -> None:
        self.data_dir = Path(data_dir) if data_dir is not None else default_data_dir()
        self.progress = progress
        """Told each stage of a build (the CLI prints them; the tool's log has one line)."""
        self._embedder: Embedder | None = embedder
        self._embedder_error: str | None = None
        self._indexes: dict[str, LibraryIndex] = {}
        self._lock = threading.Lock()

    @property
    def embedder(self) -> Embedder | None:
        """The dense model, loaded on first use; ``None`` (with a warning) if unavailable."""
        if self._embedder is _UNSET:
            try:
                self._embedder = load_embedder()
            except EmbedderUnavailable as exc:
                self._embedder, self._embedder_error = None, str(exc)
                log.warning(
                    "rag_embedder_unavailable: falling back to BM25-only retrieval (%s)", exc
                )
        return self._embedder

    def index(self, library: str, rebuild: bool = False) -> LibraryIndex:
        """The index of ``library``, built or loaded once per process."""
        spec = spec_for(library)
        with self._lock:
            if not rebuild and library in self._indexes:
                return self._indexes[library]
            manifest = read_manifest(self.data_dir, library)
            announced = rebuild or manifest is None
            if announced:  # before loading the embedding model, which takes seconds itself
                self._announce_build(library)
            embedder = self.embedder
            stored = None
            if not rebuild and is_current(manifest, spec, embedder):
                stored = load(self.data_dir, library)
            if stored is None:
                log.info("rag_library_building %s into %s", library, self.data_dir)
                if not announced:
                    self._announce_build(library)
                stored = build(self.data_dir, spec, embedder, self.progress)
            index = self._indexes[library] = LibraryIndex(stored)
            return index

    def _announce_build(self, library: str) -> None:
        if self.progress is not None:
            self.progress(f"building the {library} index in {self.data_dir} "
                          "(first use or a new library version; kept for next time)")

    def search(self, library: str, query: str, top_k: int = 3, mode: Mode = "fused") -> list[Hit]:
        """Search one library (the library filter); unknown names raise UnknownLibraryError."""
        index = self.index(library)
        return index.search(query, top_k, self.embedder if mode != "bm25" else None, mode)

    def status(self) -> dict[str, Any]:
        """Doctor-style report: embedder state and each library's stored build."""
        embedder = self.embedder
        libraries = {}
        for name in SUPPORTED_LIBRARIES:
            manifest = read_manifest(self.data_dir, name)
            spec = spec_for(name)
            libraries[name] = {
                "installed": installed_version(spec),
                "built": manifest.version if manifest else None,
                "entries": manifest.count if manifest else 0,
                "embedded": bool(manifest and manifest.embedder),
                "current": is_current(manifest, spec, embedder),
            }
        return {
            "data_dir": str(self.data_dir),
            "retrieval": "fused (BM25 + dense)" if embedder is not None else "BM25 only",
            "embedder": embedder.name if embedder is not None else None,
            "embedder_error": self._embedder_error,
            "libraries": libraries,
        }
