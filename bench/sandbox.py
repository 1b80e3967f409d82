"""Per-call latency of the sandbox against the reference's cold subprocess, same run.

The reference wrote each snippet (behind its pre-import block) to a temp file and ran a
fresh ``python`` on it with the host environment. We run the same snippets through
``PythonSandbox`` with every protection on and print medians, p90s and the speed-up.

    .venv/bin/python bench/sandbox.py [--quick]

Calls are spaced by a short pause (``--gap``, like the model's turn between tool calls) so
each call finds a pre-forked worker; ``--gap 0`` measures back-to-back calls, which are
bounded by how fast workers are forked and prepared. Last, the first call of an engine
process after a 1 s model turn, with the sandbox started on that call vs in the background.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.sandbox import PythonSandbox, SandboxConfig
from engine.sandbox.runner import PRE_IMPORTED
from handlers.ports import ToolOptions

SNIPPETS = {
    "trivial": "print(1 + 1)",
    "sympy": "from sympy import symbols, solve\nx = symbols('x')\nprint(solve(x**2 - 5*x + 6, x))",
}
_PREIMPORTS = PRE_IMPORTED  # the cold baseline imports what the sandbox pre-imports
TARGETS = {"trivial": 3.0, "sympy": 20.0}


def reference_wrap(code: str) -> str:
    """The reference's pre-import block in front of the code."""
    stars = [f"from {m} import *" for m in (*_PREIMPORTS, "builtins", "typing")]
    plain = [f"import {m}" for m in _PREIMPORTS]
    return "\n".join([*stars, *plain, "sys.setrecursionlimit(6*10**5)", code]) + "\n"


def cold_call(code: str) -> float:
    """One reference-style call: temp file, fresh interpreter, captured output."""
    started = time.perf_counter()
    fd, path = tempfile.mkstemp(suffix=".py", prefix="temp_code_")
    try:
        with os.fdopen(fd, "w") as f:
            f.write(reference_wrap(code))
        done = subprocess.run(
            [sys.executable, path],
            capture_output=True,
            text=True,
            timeout=60,
            env=os.environ.copy(),
            check=False,
        )
        assert done.returncode == 0, done.stderr
    finally:
        os.unlink(path)
    return time.perf_counter() - started


async def sandbox_calls(box: PythonSandbox, code: str, n: int, gap: float) -> list[float]:
    times = []
    for _ in range(n):
        await asyncio.sleep(gap)
        started = time.perf_counter()
        outcome = await box.run(code)
        times.append(time.perf_counter() - started)
        assert outcome.ok, outcome
    return times


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


async def first_call(background: bool, turn_s: float) -> float:
    """Seconds from an engine's services being built to its first python result.

    ``turn_s`` stands for the model's first turn, which comes before any tool call; with
    ``background`` the sandbox starts during it (what ``build_services`` does).
    """
    from engine.tools.python_code import SandboxedPython

    tool = SandboxedPython()
    started = time.perf_counter()
    if background:
        tool.start_in_background()
    await asyncio.sleep(turn_s)
    try:
        await tool.run("print(1 + 1)", ToolOptions())
        return time.perf_counter() - started
    finally:
        await tool.close()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    parser.add_argument("--gap", type=float, default=0.05, help="pause between calls (s)")
    args = parser.parse_args()
    n_cold, n_box = (5, 20) if args.quick else (20, 100)
    async with PythonSandbox(SandboxConfig()) as box:
        off = [k for k, v in box.protections().items() if v is not True and k != "scratch_dir"]
        print(f"protections off: {off or 'none'}")
        await sandbox_calls(box, "print(0)", 3, args.gap)  # warm the pool
        failed = []
        for name, code in SNIPPETS.items():
            cold = [cold_call(code) for _ in range(n_cold)]
            warm = await sandbox_calls(box, code, n_box, args.gap)
            (c_med, c_p90), (w_med, w_p90) = summary(cold), summary(warm)
            ratio = c_med / w_med
            print(
                f"{name:8} cold python: median {c_med * 1e3:7.1f} ms  p90 {c_p90 * 1e3:7.1f} ms"
                f" | sandbox: median {w_med * 1e3:6.1f} ms  p90 {w_p90 * 1e3:6.1f} ms"
                f" | {ratio:5.1f}x faster (target >= {TARGETS[name]:g}x)"
                f" p90 ratio {c_p90 / w_p90:5.1f}x"
            )
            if ratio < TARGETS[name]:
                failed.append(name)
        burst = 16
        started = time.perf_counter()
        await asyncio.gather(*(box.run(SNIPPETS["trivial"]) for _ in range(burst)))
        elapsed = time.perf_counter() - started
        print(
            f"burst of {burst} concurrent trivial calls: {elapsed * 1e3:.0f} ms "
            f"({burst / elapsed:.0f} calls/s)"
        )
    turn = 1.0
    lazy, early = await first_call(False, turn), await first_call(True, turn)
    print(
        f"first call after a {turn:g} s model turn: sandbox started on the call {lazy:.2f} s"
        f" | started in the background {early:.2f} s | {lazy / early:.1f}x sooner"
    )
    if failed:
        print(f"below target: {', '.join(failed)}")


if __name__ == "__main__":
    asyncio.run(main())
