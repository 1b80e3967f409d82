"""Running `apollo` as a user does from a test's own directory (so `results/` lands there), over
an event log in that directory, and the small dataset the dataset-run tests share."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "<think>2 + 3 = 5.</think>\n<answer>\\boxed{5}</answer>"
SCRIPTED = f"scripted:{ROOT / 'examples' / 'scripted' / 'demo.json'}"


def sums_dataset(tmp_path: Path) -> Path:
    """Two problems whose answer is 5 (made up for these tests)."""
    path = tmp_path / "sums.jsonl"
    rows = [{"id": "a", "problem": "What is 2 + 3?", "answer": "5"},
            {"id": "b", "problem": "What is 10 - 5?", "answer": "5"}]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows))
    return path


async def apollo_in(tmp_path: Path, *args: str) -> tuple[int, str, str]:
    """``apollo ARGS`` in a subprocess run in ``tmp_path``, its data dir (and so its event log) there too."""
    env = {**os.environ, "APOLLO_DATA_DIR": str(tmp_path / "data")}
    env.pop("APOLLO_NATS_URL", None)
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "engine", *args, cwd=tmp_path, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 100)
    return process.returncode or 0, out.decode(), err.decode()


def jsonl_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
