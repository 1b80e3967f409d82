"""Long-running processes freeze their start-up heap out of the garbage collector's scans.

Each check runs in a fresh interpreter: freezing is process-wide and would otherwise
reach into the test runner's own heap.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    done = subprocess.run(  # our own snippet
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


def test_objects_alive_at_start_up_are_frozen_and_later_ones_are_not() -> None:
    """Objects alive at start-up are frozen by the GC and objects made later are not."""
    out = _run(
        """
        import gc
        from engine.runtime.processes import freeze_startup_heap
        import engine.runtime.dispatcher, openai, nats  # what a worker has loaded by then
        freeze_startup_heap()
        frozen = gc.get_freeze_count()
        later = [[] for _ in range(1000)]
        print(frozen, gc.get_freeze_count() - frozen)
        """
    )
    frozen, added_later = map(int, out.split())
    assert frozen > 10_000  # the imported SDKs alone leave far more than this
    assert added_later == 0


def test_garbage_cycles_made_before_the_freeze_are_collected_not_frozen() -> None:
    """Garbage cycles made before the freeze are collected rather than frozen."""
    out = _run(
        """
        import gc, weakref
        from engine.runtime.processes import freeze_startup_heap

        class Node:
            pass

        a, b = Node(), Node()
        a.other, b.other = b, a
        watch = weakref.ref(a)
        del a, b
        freeze_startup_heap()
        print(watch() is None)
        """
    )
    assert out.strip() == "True"


def test_garbage_cycles_made_after_the_freeze_are_still_collected() -> None:
    """Garbage cycles made after the freeze are still collected."""
    out = _run(
        """
        import gc, weakref
        from engine.runtime.processes import freeze_startup_heap

        class Node:
            pass

        freeze_startup_heap()
        a, b = Node(), Node()
        a.other, b.other = b, a
        watch = weakref.ref(a)
        del a, b
        gc.collect()
        print(watch() is None)
        """
    )
    assert out.strip() == "True"
