"""Build, persist and reload one library's knowledge base under a data directory.

Layout: ``<data_dir>/<library>/entries.json`` (doc entries), ``embeddings.npy``
(optional, one row per entry) and ``manifest.json``, written last, recording the
library version, format and embedder it was built from. A missing or mismatching
manifest means "rebuild".
"""

from __future__ import annotations

import logging
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

import msgspec
import numpy as np

from engine.rag.embedder import Embedder
from engine.rag.harvest import DocEntry, harvest
from engine.rag.libraries import LibrarySpec, installed_version
from engine.rag.text import embed_text

log = logging.getLogger(__name__)

FORMAT_VERSION: Final = 1
_MANIFEST: Final = "manifest.json"
_ENTRIES: Final = "entries.json"
_EMBEDDINGS: Final = "embeddings.npy"


class Manifest(msgspec.Struct, frozen=True, kw_only=True):
    """What a stored library KB was built from."""

    library: str
    version: str
    format: int = FORMAT_VERSION
    embedder: str | None = None
    count: int = 0
    built_at: float = 0.0
    build_seconds: float = 0.0


class StoredLibrary(msgspec.Struct, frozen=True, kw_only=True):
    """A loaded library KB."""

    manifest: Manifest
    entries: list[DocEntry]
    embeddings: np.ndarray | None = None


def default_data_dir() -> Path:
    """The user's data dir for apollo's knowledge base (``.../apollo/rag``)."""
    from platformdirs import user_data_dir

    return Path(user_data_dir("apollo")) / "rag"


def read_manifest(data_dir: Path, library: str) -> Manifest | None:
    """The stored manifest, or ``None`` when absent or unreadable."""
    path = data_dir / library / _MANIFEST
    try:
        return msgspec.json.decode(path.read_bytes(), type=Manifest)
    except (OSError, msgspec.DecodeError):
        return None


def is_current(manifest: Manifest | None, spec: LibrarySpec, embedder: Embedder | None) -> bool:
    """Whether a stored KB matches the installed library, format and embedder."""
    if manifest is None:
        return False
    wanted_embedder = embedder.name if embedder is not None else manifest.embedder
    return (
        manifest.version == installed_version(spec)
        and manifest.format == FORMAT_VERSION
        and manifest.embedder == wanted_embedder
    )


Progress = Callable[[str], None]
"""Receives one line per stage of a build (a first build takes tens of seconds)."""
_EMBED_CHUNK: Final = 512


def build(
    data_dir: Path, spec: LibrarySpec, embedder: Embedder | None, progress: Progress | None = None
) -> StoredLibrary:
    """Harvest ``spec``, embed its entries (when an embedder is given) and store them."""
    say = progress or _silent
    started = time.monotonic()
    say(f"{spec.name}: reading the installed documentation")
    entries = harvest(spec)
    embeddings = None
    if embedder is not None and entries:
        embeddings = _embed(embedder, [embed_text(e) for e in entries], spec.name, say)
    manifest = Manifest(
        library=spec.name,
        version=installed_version(spec),
        embedder=embedder.name if embeddings is not None and embedder is not None else None,
        count=len(entries),
        built_at=time.time(),
        build_seconds=round(time.monotonic() - started, 3),
    )
    _write(data_dir / spec.name, manifest, entries, embeddings)
    log.info(
        "rag_library_built %s %s entries in %.1fs", spec.name, len(entries), manifest.build_seconds
    )
    return StoredLibrary(manifest=manifest, entries=entries, embeddings=embeddings)


def _embed(embedder: Embedder, texts: list[str], library: str, say: Progress) -> np.ndarray:
    """Embed in chunks, reporting after each (one call would be silent for many seconds)."""
    parts = []
    for start in range(0, len(texts), _EMBED_CHUNK):
        say(f"{library}: embedding entries {start + 1}-{min(start + _EMBED_CHUNK, len(texts))} of {len(texts)}")
        parts.append(embedder.encode(texts[start : start + _EMBED_CHUNK]))
    return np.concatenate(parts)


def _silent(_line: str) -> None:
    return None


def load(data_dir: Path, library: str) -> StoredLibrary | None:
    """Read a stored KB, or ``None`` when it is missing or damaged."""
    manifest = read_manifest(data_dir, library)
    if manifest is None:
        return None
    folder = data_dir / library
    try:
        entries = msgspec.json.decode((folder / _ENTRIES).read_bytes(), type=list[DocEntry])
        embeddings = None
        if manifest.embedder is not None:
            embeddings = np.load(folder / _EMBEDDINGS, allow_pickle=False)
    except (OSError, ValueError, msgspec.DecodeError) as exc:
        log.warning("rag_library_unreadable %s: %s", library, exc)
        return None
    if len(entries) != manifest.count or (
        embeddings is not None and embeddings.shape[0] != len(entries)
    ):
        log.warning("rag_library_inconsistent %s", library)
        return None
    return StoredLibrary(manifest=manifest, entries=entries, embeddings=embeddings)


def _write(
    folder: Path, manifest: Manifest, entries: list[DocEntry], embeddings: np.ndarray | None
) -> None:
    """Write into a fresh sibling folder, then swap it in, so readers never see a mix."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    staging = folder.with_name(f".{folder.name}.{os.getpid()}.tmp")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    (staging / _ENTRIES).write_bytes(msgspec.json.encode(entries))
    if embeddings is not None:
        np.save(staging / _EMBEDDINGS, embeddings.astype(np.float32), allow_pickle=False)
    (staging / _MANIFEST).write_bytes(msgspec.json.encode(manifest))
    retired = folder.with_name(f".{folder.name}.{os.getpid()}.old")
    shutil.rmtree(retired, ignore_errors=True)
    if folder.exists():
        folder.rename(retired)
    staging.rename(folder)
    shutil.rmtree(retired, ignore_errors=True)
