"""Per-call latency of the sandbox against the reference's cold subprocess, same run.

The reference wrote each snippet (behind its pre-import block) to a temp file and ran a
fresh ``python`` on it with the host environment. We run the same snippets through
``PythonSandbox`` with every protection on and print medians, p90s and the speed-up.

    .venv/bin/python bench/sandbox.py [--quick] [--gap S] [--hostile | --no-hostile] [--drip-s S]

Calls are spaced by a short pause (``--gap``, like the model's turn between tool calls) so
each call finds a pre-forked worker; ``--gap 0`` measures back-to-back calls, which are
bounded by how fast workers are forked and prepared. Last, the first call of an engine
process after a 1 s model turn, with the sandbox started on that call vs in the background.

Then the red team's figures (docs/sandbox.md), each against a baseline of the same run and
in a sandbox of its own (about 10 s; ``--hostile`` runs only this part, ``--no-hostile``
skips it): the engine's CPU while a snippet writes one byte per ``write`` for ``--drip-s``
seconds (default 3, 1 with ``--quick``) against a snippet printing as many bytes at once,
and how long runaway recursion takes to come back as a ``RecursionError`` against a trivial
call. Figures only: nothing here judges a timing.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.sandbox import PythonSandbox, SandboxConfig, SandboxOutcome
from engine.sandbox.runner import PRE_IMPORTED
from handlers.ports import ToolOptions

SNIPPETS = {
    "trivial": "print(1 + 1)",
    "sympy": "from sympy import symbols, solve\nx = symbols('x')\nprint(solve(x**2 - 5*x + 6, x))",
}
_PREIMPORTS = PRE_IMPORTED  # the cold baseline imports what the sandbox pre-imports
TARGETS = {"trivial": 3.0, "sympy": 20.0}
DRIP = (
    "import os, sys, time\nn = 0\nend = time.monotonic() + {seconds}\n"
    "while time.monotonic() < end:\n    n += os.write(1, b'x')\nprint(n, file=sys.stderr)\n"
)
RUNAWAY_RECURSION = "def f(): f()\nf()"
SETTLE_S = 0.2
"""Kept inside each CPU measurement after the call, so the spare worker it triggers is
prepared within the measurement for every call alike."""


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


def _succeeded(outcome: SandboxOutcome) -> None:
    assert outcome.ok, outcome


async def sandbox_calls(box: PythonSandbox, code: str, n: int, gap: float,
                        check: Callable[[SandboxOutcome], None] = _succeeded) -> list[float]:
    """Seconds each of ``n`` calls took, ``gap`` apart; ``check`` says whether a call ended as it should."""
    times = []
    for _ in range(n):
        await asyncio.sleep(gap)
        started = time.perf_counter()
        outcome = await box.run(code)
        times.append(time.perf_counter() - started)
        check(outcome)
    return times


def _ended_in_recursion_error(outcome: SandboxOutcome) -> None:
    if "RecursionError" not in outcome.stderr:  # how it ended is checked, not how long it took
        raise SystemExit(f"runaway recursion did not end as a RecursionError: {outcome}")


def summary(times: list[float]) -> tuple[float, float]:
    ordered = sorted(times)
    return statistics.median(ordered), ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]


def host_cpu() -> float:
    """CPU seconds of this process: the engine's event loop, readers included."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def call_cpu(box: PythonSandbox, code: str) -> tuple[float, SandboxOutcome]:
    """Host CPU seconds one call costs (its settling included), and its outcome."""
    before = host_cpu()
    outcome = await box.run(code)
    await asyncio.sleep(SETTLE_S)
    return host_cpu() - before, outcome


def ratio_text(numerator: float, denominator: float) -> str:
    return f"{numerator / denominator:.1f}x" if denominator > 0 else "n/a (baseline below the clock's resolution)"


async def hostile(drip_s: float, repeats: int, gap: float) -> None:
    """The red team's figures, each beside its baseline."""
    # The output cap is raised so that a long --drip-s is not cut short by it (~2 MB/s here).
    async with PythonSandbox(SandboxConfig(kill_output_bytes=1 << 30)) as box:
        await sandbox_calls(box, "print(0)", 3, gap)  # warm the pool
        drip_cpu, outcome = await call_cpu(box, DRIP.format(seconds=drip_s))
        assert outcome.ok, outcome
        written = int(outcome.stderr.split()[-1])
        once = []
        for _ in range(repeats):
            cpu, outcome = await call_cpu(box, f"import sys\nsys.stdout.buffer.write(b'x' * {written})")
            assert outcome.ok, outcome
            once.append(cpu)
        once_cpu = statistics.median(once)
        print(
            f"drip of 1 byte per write for {drip_s:g} s ({written:,} bytes): host CPU {drip_cpu * 1e3:.1f} ms,"
            f" {drip_cpu / drip_s * 1e3:.1f} ms per second of dripping | the same bytes at once:"
            f" {once_cpu * 1e3:.1f} ms | {ratio_text(drip_cpu, once_cpu)}"
        )
        trivial = await sandbox_calls(box, SNIPPETS["trivial"], 5 * repeats, gap)
        runaway = await sandbox_calls(box, RUNAWAY_RECURSION, repeats, gap, check=_ended_in_recursion_error)
        rec_med, trivial_med = statistics.median(runaway), statistics.median(trivial)
        print(
            f"runaway recursion: RecursionError back in {rec_med:.2f} s (median of {repeats})"
            f" | trivial call {trivial_med * 1e3:.1f} ms | {ratio_text(rec_med, trivial_med)}"
        )


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
    part = parser.add_mutually_exclusive_group()
    part.add_argument("--hostile", action="store_true", help="only the red team's figures")
    part.add_argument("--no-hostile", action="store_true", help="skip the red team's figures")
    parser.add_argument("--drip-s", type=float, default=None, help="seconds of dripping (default 3, --quick 1)")
    args = parser.parse_args()
    if args.drip_s is not None and args.drip_s <= 0:
        parser.error("--drip-s must be more than 0")
    drip_s = args.drip_s or (1.0 if args.quick else 3.0)
    if not args.hostile:
        await latency(args.quick, args.gap)
    if not args.no_hostile:
        await hostile(drip_s, 1 if args.quick else 3, args.gap)


async def latency(quick: bool, gap: float) -> None:
    """Per-call latency against the cold subprocess, a burst, and the first call of a process."""
    n_cold, n_box = (5, 20) if quick else (20, 100)
    async with PythonSandbox(SandboxConfig()) as box:
        off = [k for k, v in box.protections().items() if v is not True and k != "scratch_dir"]
        print(f"protections off: {off or 'none'}")
        await sandbox_calls(box, "print(0)", 3, gap)  # warm the pool
        failed = []
        for name, code in SNIPPETS.items():
            cold = [cold_call(code) for _ in range(n_cold)]
            warm = await sandbox_calls(box, code, n_box, gap)
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
