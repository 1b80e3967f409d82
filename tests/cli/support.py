"""Running `apollo` as a user does, over an event log kept in a test's data dir."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DATASET = ROOT.parent / "shared" / "data" / "gsm8k.jsonl"


def apollo(data: Path, *args: str) -> tuple[int, str, str]:
    """``apollo ARGS`` in a subprocess over the event log in ``data``: (exit code, stdout, stderr)."""
    env = {**os.environ, "APOLLO_DATA_DIR": str(data)}
    env.pop("APOLLO_NATS_URL", None)
    done = subprocess.run([sys.executable, "-m", "engine", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=100, check=False)
    return done.returncode, done.stdout, done.stderr


def copy_of(data: Path, into: Path) -> Path:
    """A copy of the data dir ``data`` (its event log included) that a test may add runs to,
    leaving a session's shared runs as other tests expect them."""
    import shutil

    return Path(shutil.copytree(data, into / "data-copy", ignore=shutil.ignore_patterns("*.lock")))
