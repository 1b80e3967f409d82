"""bench/rl_loop.py runs to its ratios at the smallest sizes (no figure is judged: the machine is shared)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_rl_loop_benchmark_prints_both_loops_and_their_ratio() -> None:
    """The RL loop benchmark prints the in-process loop and the engine with each rollout server (llama.cpp,
    the trainer's endpoint): their phase shares and step-time ratios."""
    done = subprocess.run(  # our own script
        [sys.executable, "bench/rl_loop.py", "--steps", "2", "--groups", "1", "--group-size", "2",
         "--max-tokens", "4"],
        cwd=ROOT, capture_output=True, text=True, timeout=850, check=False,
    )  # fmt: skip
    assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
    lines = done.stdout.splitlines()
    for loop in ("in-process / 1", "engine llamacpp / 1", "engine trainer / 1"):
        row = next((line for line in lines if line.startswith(loop)), None)
        assert row is not None and row.count("%") == 4, (loop, done.stdout)  # rollout, tokenising, training, syncing
    for server in ("llamacpp", "trainer"):  # each rollout server against the in-process loop
        assert any(f"engine {server} / in-process at 1 group(s) in flight: step time" in line and "x, CPU" in line
                   for line in lines), done.stdout


def test_rl_loop_benchmark_refuses_a_single_step() -> None:
    """The RL loop benchmark refuses --steps 1 with exit 2 and no traceback."""
    done = subprocess.run(  # our own script
        [sys.executable, "bench/rl_loop.py", "--steps", "1"],
        cwd=ROOT, capture_output=True, text=True, timeout=120, check=False,
    )
    assert done.returncode == 2
    assert "--steps must be 2 or more" in done.stderr and "Traceback" not in done.stderr
