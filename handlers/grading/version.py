"""Grader versions: a short digest of a grader's code and settings, recorded with every grade.

A score means little without the code that gave it: a grader fixed tomorrow would grade
today's answers differently. So every grade names its grader and this version, and two
grades with the same version were computed by the same code under the same settings
(which is how `apollo regrade` knows a regrade would add nothing).

The digest covers the source files of the modules that implement the grader (for the
built-in graders the modules their ``GraderSpec.sources`` name, every module of
``handlers/grading/``; for a plugin's grader the module that defines it), the installed versions
of the libraries the built-ins call, and the settings as canonical JSON. Reading this
package's own source is the one file read in the handlers layer: it describes code, not
the world, and is done once per process.
"""

from __future__ import annotations

import hashlib
import importlib.util
import inspect
import json
import sys
from collections.abc import Callable, Mapping
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Final

from handlers.grading.registry import BUILTIN_GRADERS

DIGEST_LENGTH: Final = 12
"""Hex digits kept: enough to tell versions apart, short enough to read in a table."""

BUILTIN_SOURCES: Final[Mapping[str, tuple[str, ...]]] = {spec.name: spec.sources for spec in BUILTIN_GRADERS}
"""The modules (a package means every ``.py`` file under it) each built-in grader runs."""

LIBRARIES: Final = ("math-verify", "sympy", "latex2sympy2_extended")
"""Libraries the built-in graders call: a new release can change a grade as our code can."""


def grader_version(name: str, settings: Mapping[str, Any] | None = None, *,
                   grade: Callable[..., Any] | None = None) -> str:
    """The version of grader ``name`` under ``settings``: ``DIGEST_LENGTH`` hex digits.

    Built-in graders are known by name; a plugin's grader is versioned from the source
    of the module that defines ``grade``.

    Raises:
        LookupError: ``name`` is not built in and no ``grade`` function was given.
    """
    if name in BUILTIN_SOURCES:
        code = modules_digest(BUILTIN_SOURCES[name])
        libraries = library_versions()
    elif grade is not None:
        code, libraries = function_digest(grade), ()
    else:
        msg = f"grader {name!r} is not built in; give its function to version it"
        raise LookupError(msg)
    identity = {"grader": name, "code": code, "libraries": list(libraries), "settings": canonical(settings)}
    text = json.dumps(identity, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:DIGEST_LENGTH]


def canonical(settings: Mapping[str, Any] | None) -> Any:
    """``settings`` as JSON-ready data in one spelling: key order never changes a version."""
    if not settings:
        return {}
    return json.loads(json.dumps(settings, sort_keys=True, default=repr))


@cache
def modules_digest(modules: tuple[str, ...]) -> str:
    """SHA-256 over the source files of ``modules``, each with its path inside its package."""
    digest = hashlib.sha256()
    for name in modules:
        for label, path in _source_files(name):
            digest.update(f"{label}\0".encode())
            digest.update(path.read_bytes())
            digest.update(b"\0")
    return digest.hexdigest()


@cache
def library_versions() -> tuple[str, ...]:
    """``name==version`` for each of :data:`LIBRARIES` that is installed."""
    found = []
    for library in LIBRARIES:
        try:
            found.append(f"{library}=={version(library)}")
        except PackageNotFoundError:
            found.append(f"{library}==absent")
    return tuple(found)


def function_digest(grade: Callable[..., Any]) -> str:
    """SHA-256 of the source file that defines ``grade`` (its own source when the file is gone)."""
    module = sys.modules.get(getattr(grade, "__module__", "") or "")
    path = getattr(module, "__file__", None)
    if path and Path(path).is_file():
        return _file_digest(path)
    try:
        return hashlib.sha256(inspect.getsource(grade).encode()).hexdigest()
    except (OSError, TypeError):
        return hashlib.sha256(getattr(grade, "__qualname__", repr(grade)).encode()).hexdigest()


@cache
def _file_digest(path: str) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def _source_files(module: str) -> list[tuple[str, Path]]:
    """(label, path) of every ``.py`` file of ``module``, in a fixed order."""
    spec = importlib.util.find_spec(module)
    if spec is None or spec.origin is None:
        msg = f"cannot find the source of module {module!r}"
        raise LookupError(msg)
    if spec.submodule_search_locations:
        root = Path(spec.origin).parent
        files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
        return [(f"{module}/{p.relative_to(root).as_posix()}", p) for p in files]
    return [(module, Path(spec.origin))]
