"""Which libraries the knowledge base covers and where their public API lives."""

from __future__ import annotations

import importlib.metadata
import platform
from dataclasses import dataclass, field
from typing import Final

from engine.errors import EngineError


@dataclass(frozen=True)
class LibrarySpec:
    """How to walk one library's public API.

    ``modules`` are imported and their public names (``__all__`` or non-underscore
    attributes) harvested; ``method_classes`` are public classes whose inherited
    methods are harvested too, because users call them through that class
    (``sympy.Matrix.eigenvals`` is defined on a private base).
    """

    name: str
    distribution: str | None
    modules: tuple[str, ...]
    method_classes: tuple[str, ...] = ()
    max_chunks: int = 2000
    skip: tuple[str, ...] = field(default=())


_SYMPY_MODULES = (
    "sympy",
    "sympy.solvers.diophantine",
    "sympy.solvers.ode",
    "sympy.solvers.inequalities",
    "sympy.solvers.recurr",
    "sympy.ntheory",
    "sympy.ntheory.modular",
    "sympy.combinatorics",
    "sympy.stats",
    "sympy.discrete",
    "sympy.geometry",
    "sympy.logic",
    "sympy.sets",
    "sympy.series",
    "sympy.polys",
    "sympy.matrices",
    "sympy.integrals",
    "sympy.simplify",
    "sympy.calculus",
    "sympy.vector",
    "sympy.functions.combinatorial.numbers",
)

_SCIPY_MODULES = tuple(
    f"scipy.{sub}"
    for sub in (
        "optimize",
        "linalg",
        "integrate",
        "special",
        "stats",
        "interpolate",
        "fft",
        "signal",
        "sparse",
        "sparse.linalg",
        "sparse.csgraph",
        "spatial",
        "ndimage",
        "cluster.vq",
        "cluster.hierarchy",
        "constants",
        "differentiate",
        "io",
    )
)

_NUMPY_MODULES = (
    "numpy",
    "numpy.linalg",
    "numpy.fft",
    "numpy.random",
    "numpy.polynomial",
    "numpy.polynomial.polynomial",
)

LIBRARIES: Final[dict[str, LibrarySpec]] = {
    spec.name: spec
    for spec in (
        LibrarySpec(
            "sympy",
            "sympy",
            _SYMPY_MODULES,
            method_classes=(
                "sympy.Matrix",
                "sympy.Expr",
                "sympy.Poly",
                "sympy.Rational",
                "sympy.Interval",
                "sympy.combinatorics.Permutation",
            ),
            max_chunks=2600,
        ),
        LibrarySpec(
            "scipy",
            "scipy",
            _SCIPY_MODULES,
            method_classes=("scipy.stats.rv_continuous", "scipy.stats.rv_discrete"),
            max_chunks=2200,
        ),
        LibrarySpec(
            "numpy",
            "numpy",
            _NUMPY_MODULES,
            method_classes=(
                "numpy.ndarray",
                "numpy.random.Generator",
                "numpy.polynomial.Polynomial",
            ),
            max_chunks=1400,
        ),
        LibrarySpec("math", None, ("math",)),
        LibrarySpec("cmath", None, ("cmath",)),
        LibrarySpec("fractions", None, ("fractions",)),
        LibrarySpec("itertools", None, ("itertools",)),
    )
}

SUPPORTED_LIBRARIES: Final[tuple[str, ...]] = tuple(LIBRARIES)


class UnknownLibraryError(ValueError, EngineError):
    """The requested library is not one the knowledge base covers."""

    def __init__(self, name: str) -> None:
        msg = f"Unsupported repository name: {name!r} (supported: {', '.join(SUPPORTED_LIBRARIES)})"
        super().__init__(msg)
        self.name = name


def spec_for(name: str) -> LibrarySpec:
    """The spec of a supported library; raises :class:`UnknownLibraryError` otherwise."""
    try:
        return LIBRARIES[name]
    except (KeyError, TypeError):
        raise UnknownLibraryError(str(name)) from None


def installed_version(spec: LibrarySpec) -> str:
    """The version the KB of ``spec`` would be built from (Python's for stdlib modules)."""
    if spec.distribution is None:
        return f"python-{platform.python_version()}"
    try:
        return importlib.metadata.version(spec.distribution)
    except importlib.metadata.PackageNotFoundError:
        return "missing"
