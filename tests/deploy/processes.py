"""Worker processes and checks shared by the scale-out tests (real `python -m engine worker`)."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.app.operations import submission
from engine.nats.streams import Definitions
from events.model import ModelResponded
from events.run import RunCompleted, RunFailed, RunStarted
from events.tool import ToolReturned

REPO = Path(__file__).resolve().parents[2]
CONSUMER = "apollo-workers"


@dataclass
class Worker:
    """One worker process in its own session (so a kill takes its sandbox with it)."""

    name: str
    process: subprocess.Popen[bytes]
    output: Path

    def handled(self) -> list[dict[str, Any]]:
        """The ``event_handled`` log lines this worker wrote."""
        lines = []
        for line in self.output.read_text(errors="replace").splitlines():
            with contextlib.suppress(ValueError):
                record = json.loads(line)
                if isinstance(record, dict) and record.get("event") == "event_handled":
                    lines.append(record)
        return lines

    def kill(self) -> None:
        """SIGKILL the worker and everything it started (like a lost container)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.kill()
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)


def spawn_worker(
    url: str,
    folder: Path,
    name: str,
    *,
    model_url: str,
    concurrency: int = 8,
    config: Path | None = None,
    extra_env: dict[str, str] | None = None,
) -> Worker:
    """Start ``python -m engine worker`` against ``url`` with the fake model at ``model_url``."""
    folder.mkdir(parents=True, exist_ok=True)
    output = folder / f"{name}.log"
    env = {
        **os.environ,
        "APOLLO_MODEL_URL": model_url,
        "APOLLO_MODEL": "fake-model",
        "APOLLO_DATA_DIR": str(folder / name),
        **(extra_env or {}),
    }
    args = [sys.executable, "-m", "engine", "--nats-url", url, "--log-json", "--log-level", "debug"]
    if config is not None:
        args += ["--config", str(config)]
    args += ["worker", "--concurrency", str(concurrency)]
    with output.open("wb") as sink:
        process = subprocess.Popen(  # our own module
            args, cwd=REPO, env=env, stdout=sink, stderr=subprocess.STDOUT, start_new_session=True
        )
    return Worker(name, process, output)


async def wait_pulling(js: Any, workers: int, *, stream: str = "APOLLO", timeout: float = 60.0) -> None:
    """Until the work consumer has pull requests from at least ``workers`` clients."""
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        with contextlib.suppress(Exception):
            info = await js.consumer_info(stream, CONSUMER)
            if info.num_waiting >= workers:
                return
        await asyncio.sleep(0.1)
    raise AssertionError(f"fewer than {workers} worker(s) pulling after {timeout}s")


async def set_ack_wait(js: Any, seconds: float, *, stream: str = "APOLLO") -> None:
    """Shorten the consumer's ack_wait so a dead worker's messages come back quickly in tests."""
    config = Definitions.load().consumer_config(CONSUMER)
    config.ack_wait = seconds
    await js.add_consumer(stream, config)


async def submit(log: Any, run_ids: list[str], question: str = "What is 2 + 2?") -> None:
    for run_id in run_ids:
        await log.append(submission(run_id, question, ground_truth="4"))


async def wait_finished(log: Any, run_ids: list[str], *, timeout: float = 90.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    pending = set(run_ids)
    while pending and asyncio.get_running_loop().time() < deadline:
        for run_id in list(pending):
            with contextlib.suppress(Exception):
                records = await log.read_run(run_id)
                if any(isinstance(r.event, (RunCompleted, RunFailed)) for r in records):
                    pending.discard(run_id)
        await asyncio.sleep(0.2)
    assert not pending, f"runs not finished after {timeout}s: {sorted(pending)}"


async def assert_recorded_once(log: Any, run_ids: list[str]) -> list[Any]:
    """Unique event ids, one RunStarted per run, one result per model/tool call, all completed."""
    events = [record.event async for record in log.read_all()]
    ids = collections.Counter(event.event_id for event in events)
    assert [i for i, n in ids.items() if n > 1] == []
    for run_id in run_ids:
        mine = [e for e in events if e.run_id == run_id]
        assert sum(isinstance(e, RunStarted) for e in mine) == 1
        assert sum(isinstance(e, RunCompleted) for e in mine) == 1, (run_id, [type(e).__name__ for e in mine])
    for kind in (ModelResponded, ToolReturned):
        calls = collections.Counter(e.call_id for e in events if isinstance(e, kind))
        assert [c for c, n in calls.items() if n > 1] == []
    return events
