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
    """A standard traceback without the runner's frames, in the user's line numbers.

    A very long traceback (runaway recursion reaches 600,000 frames) is shortened before it
    is extracted, as Python itself would print it: a run of one repeated line shows three
    times and then ``[Previous line repeated N more times]``; what is still longer keeps its
    first and last :data:`FRAMES_SHOWN` frames. Extracting and formatting every frame would
    take longer than most timeouts, so the call would end as a timeout, not as the error.
    """
    notes: dict[int, list[str]] = {}
    _shorten(exc, notes, set())
    report = traceback.TracebackException.from_exception(exc)
    _trim(report, exc, prepared, notes, set())
    return "".join(report.format())


FRAMES_SHOWN = 100
"""Frames kept at each end of a traceback that is still long once repeats are collapsed."""
_REPEATS_SHOWN = 3  # traceback._RECURSIVE_CUTOFF: what Python prints of a repeated line


class _NotedStack(traceback.StackSummary):
    """Frames with a note to print after some of them (the frames cut there)."""

    notes: list[str]

    def format(self) -> list[str]:
        lines = []
        for frame, note in zip(self, self.notes, strict=True):
            text = self.format_frame_summary(frame)
            if text is not None:
                lines.append(text)
            if note:
                lines.append(note)
        return lines


def _shorten(exc: BaseException, notes: dict[int, list[str]], seen: set[int]) -> None:
    """Cut long tracebacks of ``exc`` and its chained exceptions; record the notes per
    exception (one per kept frame, ``""`` for none)."""
    if id(exc) in seen:
        return
    seen.add(id(exc))
    entries: list[types.TracebackType] = []
    tb = exc.__traceback__
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    if len(entries) > 2 * FRAMES_SHOWN:
        kept, kept_notes = _collapse_repeats(entries)
        if len(kept) > 2 * FRAMES_SHOWN:
            cut = len(kept) - 2 * FRAMES_SHOWN
            kept_notes[FRAMES_SHOWN - 1] += f"  [... {cut} more frames not shown ...]\n"
            kept = kept[:FRAMES_SHOWN] + kept[-FRAMES_SHOWN:]
            kept_notes = kept_notes[:FRAMES_SHOWN] + kept_notes[-FRAMES_SHOWN:]
        chain: types.TracebackType | None = None
        for entry in reversed(kept):
            chain = types.TracebackType(chain, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
        exc.__traceback__ = chain
        notes[id(exc)] = kept_notes
    for chained in (exc.__cause__, exc.__context__):
        if chained is not None:
            _shorten(chained, notes, seen)


def _collapse_repeats(
    entries: list[types.TracebackType],
) -> tuple[list[types.TracebackType], list[str]]:
    kept: list[types.TracebackType] = []
    kept_notes: list[str] = []
    run = 0
    for i, entry in enumerate(entries):
        same = i > 0 and (entry.tb_frame.f_code, entry.tb_lineno) == (
            entries[i - 1].tb_frame.f_code,
            entries[i - 1].tb_lineno,
        )
        run = run + 1 if same else 1
        if run <= _REPEATS_SHOWN:
            kept.append(entry)
            kept_notes.append("")
        last_of_run = i + 1 == len(entries) or (entries[i + 1].tb_frame.f_code, entries[i + 1].tb_lineno) != (
            entry.tb_frame.f_code,
            entry.tb_lineno,
        )
        if last_of_run and run > _REPEATS_SHOWN:
            more = run - _REPEATS_SHOWN
            kept_notes[-1] += f"  [Previous line repeated {more} more time{'s' if more > 1 else ''}]\n"
    return kept, kept_notes


def _trim(
    report: traceback.TracebackException,
    exc: BaseException,
    prepared: Prepared,
    notes: dict[int, list[str]],
    seen: set[int],
) -> None:
    if id(report) in seen:
        return
    seen.add(id(report))
    frames = list(report.stack)
    frame_notes = notes.get(id(exc))
    if frame_notes is None or len(frame_notes) != len(frames):
        frame_notes = [""] * len(frames)
    first_user = next((i for i, f in enumerate(frames) if f.filename == FILENAME), None)
    if first_user is not None:
        frames, frame_notes = frames[first_user:], frame_notes[first_user:]
    elif frames and frames[0].filename == __file__:
        pairs = [(f, n) for f, n in zip(frames, frame_notes, strict=True) if f.filename != __file__]
        frames, frame_notes = [f for f, _ in pairs], [n for _, n in pairs]
    if prepared.line_map:
        frames = [_remap(f, prepared) for f in frames]
    if any(frame_notes):
        stack = _NotedStack(frames)
        stack.notes = frame_notes
        report.stack = stack
    else:
        report.stack = traceback.StackSummary.from_list(frames)
    for chained_report, chained in ((report.__cause__, exc.__cause__), (report.__context__, exc.__context__)):
        if chained_report is not None and chained is not None:
            _trim(chained_report, chained, prepared, notes, seen)


def _remap(frame: traceback.FrameSummary, prepared: Prepared) -> traceback.FrameSummary:
    if frame.filename != FILENAME:
        return frame
    line = prepared.user_line(frame.lineno)
    return traceback.FrameSummary(frame.filename, line, frame.name, lookup_line=True)
