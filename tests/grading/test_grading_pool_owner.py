"""A grading pool whose owner is killed does not outlive it (no orphaned processes)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

OWNER = """
import asyncio, json, os
from engine.grading.pool import ProcessPoolGrader

async def main():
    grader = ProcessPoolGrader()
    await grader.grade("42", "42", "math_verify")
    workers = list(grader._pool.executor._processes)
    print(json.dumps({"workers": workers}), flush=True)
    await asyncio.sleep(600)

asyncio.run(main())
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    stat = Path(f"/proc/{pid}/stat")
    return not (stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] == "Z")


def test_pool_workers_end_when_their_owner_is_killed() -> None:
    """Grading pool workers exit when the process that owns them is killed."""
    owner = subprocess.Popen([sys.executable, "-c", OWNER], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        line = owner.stdout.readline() if owner.stdout else ""
        workers = json.loads(line)["workers"]
        assert workers and all(_alive(pid) for pid in workers)
    finally:
        owner.send_signal(signal.SIGKILL)
        owner.wait(10)
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline and any(_alive(pid) for pid in workers):
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)
