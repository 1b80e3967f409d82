"""Every benchmark still runs to its printed ratio (tiny sizes; no figure is judged here).

A benchmark that rots is a silent failure: nobody runs it until a figure is needed. Each
script runs in a subprocess exactly as the README says to run it, from the repository
root, with the smallest sizes it accepts. Only the exit status and the presence of a
ratio are checked: timings on a shared machine are not asserted.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
RATIO = re.compile(r"\d+\.\d+x|ratio \d+\.\d+")

SMALL_RUNS = {
    "atomic_batches.py": ["--events", "48", "--size", "2", "--concurrency", "4"],
    "bus.py": ["--n", "200"],
    "episode.py": [
        "--episodes", "16", "--repeats", "1", "--latencies", "0", "--concurrencies", "1", "4", "--workers", "0",
        "--hops", "--unfrozen-heap", "--stub-model", "--jitter-ms", "5",
    ],
    "model_client.py": ["--calls", "100", "--concurrency", "1", "4"],
    "replay.py": ["--quick"],
    "read_scale.py": ["--sizes", "200"],
    "evolve.py": ["--rounds", "1", "--latency-ms", "5"],
    "collector.py": ["--groups", "2"],
    "scale.py": ["--workers", "1", "2", "--episodes", "8"],
    "sandbox.py": ["--quick"],
    "grading.py": ["--quick"],
    "deciding.py": ["--runs", "2"],
    "headers.py": ["--blocks", "200"],
}
"""Arguments that make each benchmark small; rag.py needs its index built and runs apart."""

ALSO_PRINTED = {
    "episode.py": (
        "problem.submitted -> run.started", "heap frozen / not frozen", "model stubbed (no HTTP)", "+/- up to 5 ms",
        "cores per dispatching process",
    ),
}
"""Output the options above ask for besides the ratio (``--hops``: the first step's gap;
``--unfrozen-heap``: the frozen/unfrozen ratio; ``--stub-model``: its row; ``--jitter-ms``: the
header says so; with any options, the cores the target would take at a concurrency above 1)."""


def test_every_benchmark_script_has_a_small_run_here() -> None:
    """Every benchmark script except rag and rl_loop has a small run listed here."""
    scripts = {path.name for path in (ROOT / "bench").glob("*.py") if not path.name.startswith("_")}
    assert scripts - set(SMALL_RUNS) == {"rag.py", "rl_loop.py"}  # rl_loop.py: tests/bench/test_rl_loop_bench.py


@pytest.mark.slow
@pytest.mark.parametrize("script", sorted(SMALL_RUNS))
def test_benchmark_runs_to_its_ratio(script: str) -> None:
    """Each benchmark script's small run exits cleanly and prints its ratio and expected lines."""
    done = subprocess.run(  # our own scripts
        [sys.executable, f"bench/{script}", *SMALL_RUNS[script]],
        cwd=ROOT, capture_output=True, text=True, timeout=300, check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-3000:]
    assert RATIO.search(done.stdout), done.stdout[-3000:]
    for expected in ALSO_PRINTED.get(script, ()):
        assert expected in done.stdout, done.stdout[-3000:]


@pytest.mark.parametrize(
    ("option", "value", "complaint"),
    [("--jitter-ms", "-3", "must be 0 or more"), ("--concurrencies", "0", "must be 1 or more")],
)
def test_episode_benchmark_refuses_an_out_of_range_option(option: str, value: str, complaint: str) -> None:
    """The episode benchmark refuses an out-of-range option with exit 2, naming it, without a traceback."""
    done = subprocess.run(  # our own script
        [sys.executable, "bench/episode.py", option, value],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 2
    assert option in done.stderr and complaint in done.stderr and "Traceback" not in done.stderr


def test_grading_benchmark_prints_its_figures() -> None:
    """bench/grading.py --quick --right-replies prints both graders' figures and their recall on right replies."""
    done = subprocess.run(  # our own script
        [sys.executable, "bench/grading.py", "--quick", "--right-replies"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    for mode in ("math_verify", "math"):
        row = next(line for line in done.stdout.splitlines() if line.startswith(f"{mode} ") and "agreement" in line)
        for figure in ("agreement", "false positives", "false negatives", "pairs/s per core", "p99"):
            assert figure in row, row
    assert re.search(r"speed math / math_verify: \d+\.\d+x", done.stdout), done.stdout
    for mode in ("math_verify", "math"):
        recall = rf"^{mode} +false negatives: \d+/\d+ replies with a box"
        assert re.search(recall, done.stdout, re.MULTILINE), done.stdout
