"""Run prepared code inside a worker process, Python-style, with tracebacks in user terms.

Runs in the sandboxed worker only: it executes untrusted code in this very process.
"""

from __future__ import annotations

import atexit
import builtins
import contextlib
import linecache
import sys
import threading
import traceback
import types
from typing import Any

from engine.sandbox.source import FILENAME, Prepared, prepare

PRE_IMPORTED = (
    "string",
    "re",
    "datetime",
    "collections",
    "heapq",
    "bisect",
    "copy",
    "math",
    "random",
    "statistics",
    "itertools",
    "functools",
    "operator",
    "io",
    "sys",
    "json",
)
"""Modules whose names the reference imported into every snippet (star-imported as well)."""

STAR_ONLY = ("builtins", "typing")
"""Star-imported after the above; ``builtins`` last-but-one restores shadowed built-ins."""

RECURSION_LIMIT = 6 * 10**5
HEAVY_MODULES = ("numpy", "scipy", "sympy", "fractions", "decimal", "cmath", "numbers")
"""Imported once in the warm parent so each call only pays for a fork."""


def build_namespace() -> dict[str, Any]:
    """The globals every snippet starts from (computed once in the warm parent)."""
    namespace: dict[str, Any] = {}
    stars = "\n".join(f"from {name} import *" for name in (*PRE_IMPORTED, *STAR_ONLY))
    plain = "import " + ", ".join(PRE_IMPORTED)
    exec(compile(f"{stars}\n{plain}\n", "<preimports>", "exec"), namespace)
    namespace.pop("__builtins__", None)
    return namespace


def warm_up() -> None:
    """Import heavy libraries and touch their lazy paths so forks start hot."""
    import importlib

    for name in HEAVY_MODULES:
        importlib.import_module(name)
    for name in (
        "scipy.optimize",
        "scipy.special",
        "scipy.integrate",
        "scipy.linalg",
        "scipy.stats",
        "sympy.ntheory",
        "numpy.linalg",
    ):
        with contextlib.suppress(ImportError):  # depends on the installed build
            importlib.import_module(name)
    import sympy

    x = sympy.Symbol("x")
    sympy.solve(x**2 - 4, x)
    sympy.simplify(sympy.sin(x) ** 2 + sympy.cos(x) ** 2)
    sympy.integrate(x**2, (x, 0, 1))
    sympy.factorint(2**32 + 1)
    sympy.Rational(1, 3) + sympy.sqrt(2)


def execute(code: str, template: dict[str, Any]) -> int:
    """Run ``code`` as ``__main__``; print its errors like Python; return the exit status."""
    prepared = prepare(code)
    if prepared.tree is None:
        assert prepared.error is not None
        sys.stderr.write("".join(traceback.format_exception_only(prepared.error)))
        return 1
    _register_source(code)
    main = types.ModuleType("__main__")
    main.__dict__.update(template)
    main.__dict__["__builtins__"] = builtins
    sys.modules["__main__"] = main
    sys.setrecursionlimit(RECURSION_LIMIT)
    try:
        compiled = compile(prepared.tree, FILENAME, "exec")
        exec(compiled, main.__dict__)
    except SystemExit as exc:
        return _exit_status(exc)
    except BaseException as exc:  # noqa: BLE001 - the snippet's own error, shown to the model as Python would
        sys.stderr.write(format_exception(exc, prepared))
        return 1
    finally:
        _finish_threads_and_atexit()
    return 0


def _exit_status(exc: SystemExit) -> int:
    code = exc.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    sys.stderr.write(f"{code}\n")
    return 1


def _finish_threads_and_atexit() -> None:
    # Best effort, as at interpreter exit: join non-daemon threads, run atexit handlers.
    with contextlib.suppress(BaseException):
        threading._shutdown()  # type: ignore[attr-defined]
    with contextlib.suppress(BaseException):
        atexit._run_exitfuncs()


def _register_source(code: str) -> None:
    lines = code.splitlines(keepends=True)
    linecache.cache[FILENAME] = (len(code), None, lines, FILENAME)


def format_exception(exc: BaseException, prepared: Prepared) -> str:
    """A standard traceback without the runner's frames, in the user's line numbers."""
    report = traceback.TracebackException.from_exception(exc)
    _trim(report, prepared, set())
    return "".join(report.format())


def _trim(report: traceback.TracebackException, prepared: Prepared, seen: set[int]) -> None:
    if id(report) in seen:
        return
    seen.add(id(report))
    frames = list(report.stack)
    first_user = next((i for i, f in enumerate(frames) if f.filename == FILENAME), None)
    if first_user is not None:
        frames = frames[first_user:]
    elif frames and frames[0].filename == __file__:
        frames = [f for f in frames if f.filename != __file__]
    if prepared.line_map:
        frames = [_remap(f, prepared) for f in frames]
    report.stack = traceback.StackSummary.from_list(frames)
    for chained in (report.__cause__, report.__context__):
        if chained is not None:
            _trim(chained, prepared, seen)


def _remap(frame: traceback.FrameSummary, prepared: Prepared) -> traceback.FrameSummary:
    if frame.filename != FILENAME:
        return frame
    line = prepared.user_line(frame.lineno)
    return traceback.FrameSummary(frame.filename, line, frame.name, lookup_line=True)
