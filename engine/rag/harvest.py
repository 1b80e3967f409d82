"""Walk a library's public API with ``inspect`` and collect one doc entry per object.

Only what is installed is read; nothing is downloaded. Import failures of single
modules are logged and skipped, and a time budget stops a walk that imports slowly.
"""

from __future__ import annotations

import importlib
import inspect
import logging
import re
import time
import warnings
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import msgspec

from engine.rag.libraries import LibrarySpec

log = logging.getLogger(__name__)

_PRIVATE_PARTS = re.compile(r"(^|\.)(_|tests?($|\.)|testing($|\.)|conftest|benchmarks?($|\.))")
_ADDRESS = re.compile(r" at 0x[0-9a-fA-F]+>")
_SIG_IN_DOC = re.compile(r"^\s*([A-Za-z_][\w.]*\(.*\))")
_WALK_BUDGET_S = 60.0


class DocEntry(msgspec.Struct, frozen=True, kw_only=True):
    """One documented public object of a library."""

    library: str
    name: str
    """Canonical qualified name: defining module plus ``__qualname__``."""
    aliases: tuple[str, ...] = ()
    """Public access paths other than ``name`` (``sympy.solve``)."""
    kind: str
    """``function``, ``class``, ``method`` or ``module``."""
    signature: str = ""
    doc: str = ""
    rank: int = 0
    """Harvest priority: 0 top-level API, 1 submodule API, 2 module docs and methods
    of the key classes, 3 other methods; the per-library cap drops the highest first."""


def harvest(spec: LibrarySpec, budget_s: float = _WALK_BUDGET_S) -> list[DocEntry]:
    """Every documented public object of ``spec``, most important first, capped."""
    started = time.monotonic()
    found: dict[str, _Draft] = {}
    for index, module_name in enumerate(spec.modules):
        if time.monotonic() - started > budget_s:
            log.warning("rag_harvest_budget_spent", extra={"library": spec.name})
            break
        module = _import(module_name)
        if module is None:
            continue
        rank = 0 if index == 0 else 1
        _add(found, spec, module_name, module, "module", rank=2)
        for public_name, obj in _public_members(module):
            _add(found, spec, f"{module_name}.{public_name}", obj, None, rank)
    for class_path in spec.method_classes:
        cls = _resolve(class_path)
        if inspect.isclass(cls):
            for meth_name, meth in _class_methods(cls, spec.name, inherited=True):
                _add(found, spec, f"{class_path}.{meth_name}", meth, "method", rank=2)
    for draft in list(found.values()):
        if draft.kind == "class" and draft.rank < 2:
            for meth_name, meth in _class_methods(draft.obj, spec.name, inherited=False):
                _add(found, spec, f"{draft.paths[0]}.{meth_name}", meth, "method", rank=3)
    entries = [draft.entry(spec.name) for draft in found.values() if draft.doc]
    entries.sort(key=lambda e: (e.rank, e.name))
    return entries[: spec.max_chunks]


class _Draft:
    """A harvested object before its final entry is made (collects access paths)."""

    def __init__(self, obj: Any, name: str, kind: str, rank: int, doc: str) -> None:
        self.obj, self.name, self.kind, self.rank, self.doc = obj, name, kind, rank, doc
        self.paths: list[str] = []

    def entry(self, library: str) -> DocEntry:
        aliases = tuple(p for p in self.paths if p != self.name)[:6]
        return DocEntry(
            library=library,
            name=self.name,
            aliases=aliases,
            kind=self.kind,
            signature=_signature(self.obj, self.paths[0].rsplit(".", 1)[-1], self.doc),
            doc=self.doc,
            rank=self.rank,
        )


def _add(
    found: dict[str, _Draft],
    spec: LibrarySpec,
    path: str,
    obj: Any,
    kind: str | None,
    rank: int,
) -> None:
    kind = kind or _kind(obj)
    if kind is None:
        return
    name = path if kind == "module" else _canonical_name(obj, path, spec.name)
    if _PRIVATE_PARTS.search(name.partition(".")[2] or ""):
        name = path
    draft = found.get(name)
    if draft is None:
        doc = _doc(obj)
        draft = found[name] = _Draft(obj, name, kind, rank, doc)
    draft.rank = min(draft.rank, rank)
    if path not in draft.paths:
        draft.paths.append(path)
        draft.paths.sort(key=lambda p: (p.count("."), len(p)))


def _import(module_name: str) -> ModuleType | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(module_name)
    except Exception as exc:  # noqa: BLE001 - any import failure just drops that module
        log.warning("rag_module_import_failed", extra={"module": module_name, "error": str(exc)})
        return None


def _resolve(path: str) -> Any:
    module_name, _, attr = path.rpartition(".")
    module = _import(module_name)
    return getattr(module, attr, None) if module is not None else None


def _public_members(module: ModuleType) -> Iterator[tuple[str, Any]]:
    names = getattr(module, "__all__", None)
    declared = isinstance(names, (list, tuple))
    if not declared:
        names = [n for n in dir(module) if not n.startswith("_")]
    library = module.__name__.partition(".")[0]
    for attr in names:
        if not isinstance(attr, str) or attr.startswith("_"):
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                obj = getattr(module, attr)
        except Exception:  # noqa: BLE001 - lazy attributes may fail to load; skip them
            continue
        # Without __all__, dir() also lists what the module merely imported.
        if not declared and not _defined_in(obj, library):
            continue
        yield attr, obj


def _defined_in(obj: Any, library: str) -> bool:
    module = getattr(obj, "__module__", None)
    return isinstance(module, str) and module.partition(".")[0] == library


def _class_methods(cls: Any, library: str, inherited: bool) -> Iterator[tuple[str, Any]]:
    owners = cls.__mro__ if inherited else (cls,)
    seen: set[str] = set()
    for owner in owners:
        if not (getattr(owner, "__module__", "") or "").startswith(library):
            continue
        for attr, raw in vars(owner).items():
            if attr.startswith("_") or attr in seen:
                continue
            seen.add(attr)
            func = raw.__func__ if isinstance(raw, (classmethod, staticmethod)) else raw
            if inspect.isroutine(func) or isinstance(raw, property):
                yield attr, func


def _kind(obj: Any) -> str | None:
    if inspect.isclass(obj):
        return "class"
    if inspect.isroutine(obj) or (callable(obj) and type(obj).__name__ == "ufunc"):
        return "function"
    if isinstance(obj, property):
        return "method"
    return None


def _canonical_name(obj: Any, path: str, library: str) -> str:
    module = getattr(obj, "__module__", None)
    qualname = getattr(obj, "__qualname__", None)
    if isinstance(obj, property) and obj.fget is not None:
        module = getattr(obj.fget, "__module__", None)
        qualname = getattr(obj.fget, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or "<" in qualname:
        return path
    if not module.startswith(library):
        return path
    return f"{module}.{qualname}"


def _doc(obj: Any) -> str:
    try:
        doc = inspect.getdoc(obj) or ""
    except Exception:  # noqa: BLE001 - broken __doc__ descriptors exist in the wild
        return ""
    return doc.strip()


def _signature(obj: Any, short_name: str, doc: str) -> str:
    if inspect.ismodule(obj):
        return ""
    target = obj.fget if isinstance(obj, property) else obj
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            sig = str(inspect.signature(target))
        if sig not in ("(*args, **kwargs)", "(*args, **kw_args)"):
            return _ADDRESS.sub(">", f"{short_name}{sig}")
    except (TypeError, ValueError):
        pass
    first = doc.splitlines()[0] if doc else ""
    match = _SIG_IN_DOC.match(first)
    return match.group(1) if match else f"{short_name}(...)"
