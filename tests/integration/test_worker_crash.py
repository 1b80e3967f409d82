"""A worker process killed with SIGKILL mid-run: after a restart nothing is lost or doubled."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from engine.app.operations import submission
from engine.models.fake_server import FakeOpenAIServer
from engine.nats.jetstream import JetStreamEventLog
from events import ModelCallRequested, ModelResponded, RunCompleted, ToolCallRequested, ToolReturned

pytestmark = pytest.mark.nats

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "examples" / "scripted" / "demo.json"


def start_worker(url: str, model_url: str, config: Path, data_dir: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "APOLLO_MODEL_URL": model_url, "APOLLO_MODEL": "fake-policy",
           "APOLLO_DATA_DIR": str(data_dir)}
    return subprocess.Popen(
        [sys.executable, "-m", "engine", "--config", str(config), "--nats-url", url, "worker"],
        env=env, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )


async def wait_for(log, run_id: str, event_type, *, count: int = 1, timeout: float = 60.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        found = [r for r in await log.read_run(run_id) if isinstance(r.event, event_type)]
        if len(found) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{event_type.__name__} x{count} not recorded for {run_id}")


@pytest.mark.parametrize("kill_during", ["model_call", "tool_call"])
async def test_sigkilled_worker_is_replaced_without_loss_or_duplicates(nats_server, tmp_path, kill_during) -> None:
    """Kill -9 during a model call or a tool call; a new worker finishes the run exactly once."""
    config = tmp_path / "apollo.yaml"
    config.write_text("nats:\n  ack_wait: 2\n")
    async with FakeOpenAIServer(DEMO, latency_ms=1500) as model:
        log = await JetStreamEventLog.connect(nats_server.url, ack_wait=2)
        worker = start_worker(nats_server.url, model.base_url, config, tmp_path / "data")
        try:
            await log.append(submission("r-crash", "What is 6 times 7?", ground_truth="42"))
            if kill_during == "model_call":
                await wait_for(log, "r-crash", ModelCallRequested)
                await asyncio.sleep(0.5)  # the worker is now waiting on the model
            else:
                await wait_for(log, "r-crash", ToolCallRequested)
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
            worker = start_worker(nats_server.url, model.base_url, config, tmp_path / "data")
            await wait_for(log, "r-crash", RunCompleted, timeout=90)
            events = [r.event for r in await log.read_run("r-crash")]
        finally:
            worker.kill()
            worker.wait(10)
            await log.close()
    ids = Counter(e.event_id for e in events)
    assert [i for i, n in ids.items() if n > 1] == []
    responses = Counter(e.call_id for e in events if isinstance(e, ModelResponded))
    assert all(n == 1 for n in responses.values()) and len(responses) == 2
    assert len([e for e in events if isinstance(e, ToolReturned)]) == 1
    assert [e.score for e in events if isinstance(e, RunCompleted)] == [1.0]
    assert model.requests_total <= 3  # the interrupted call is redone at most once
