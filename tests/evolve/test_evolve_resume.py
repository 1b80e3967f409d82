"""Kill a worker mid-round: a new worker continues from the log without repeating calls."""

from __future__ import annotations

import asyncio
import json
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
from events import ModelResponded, RoundCompleted, RunCompleted

pytestmark = pytest.mark.nats

ROOT = Path(__file__).resolve().parents[2]


def reply(messages: list[dict]) -> str:
    """Role by prompt: policy answers, verifiers approve, the summarizer condenses."""
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    if prompt.startswith("### Role"):
        return "**Strategy:** multiply."
    if prompt.startswith("You are a verifier"):
        return "<report>6 times 7 is 42. \\boxed{1}</report>"
    if prompt.startswith("You merge"):
        return "<report>All agree. \\boxed{1}</report>"
    return "<answer>\\boxed{42}</answer>"


def start_worker(url: str, config: Path, data_dir: Path) -> subprocess.Popen[bytes]:
    env = {**os.environ, "APOLLO_DATA_DIR": str(data_dir)}
    return subprocess.Popen(
        [sys.executable, "-m", "engine", "--config", str(config), "--nats-url", url, "worker"],
        env=env,
        cwd=ROOT,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


async def wait_for(log, run_id: str, event_type, *, count: int = 1, timeout: float = 90.0) -> None:
    deadline = asyncio.get_running_loop().time() + timeout
    while asyncio.get_running_loop().time() < deadline:
        if len([r for r in await log.read_run(run_id) if isinstance(r.event, event_type)]) >= count:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{event_type.__name__} x{count} not recorded for {run_id}")


async def test_killed_worker_resumes_the_evolve_run_without_repeating_calls(
    nats_server, tmp_path
) -> None:
    """SIGKILL during round 1's verifiers; the restarted worker finishes with each call made once."""
    async with FakeOpenAIServer(reply, latency_ms=400) as model:
        config = tmp_path / "apollo.yaml"
        config.write_text(
            json.dumps(
                {
                    "nats": {"ack_wait": 2},
                    "models": {
                        "policy": {
                            "model": "fake-model",
                            "base_url": model.base_url,
                            "max_retries": 0,
                        }
                    },
                    "evolve": {"rounds": 2, "verifiers": 3},
                }
            )
        )
        log = await JetStreamEventLog.connect(nats_server.url, ack_wait=2)
        worker = start_worker(nats_server.url, config, tmp_path / "data")
        try:
            await log.append(
                submission("r-evo-kill", "What is 6 times 7?", ground_truth="42", workflow="evolve")
            )
            await wait_for(log, "r-evo-kill", RoundCompleted)
            await asyncio.sleep(0.6)  # round 1 is under way, a call is in flight
            worker.send_signal(signal.SIGKILL)
            worker.wait(10)
            worker = start_worker(nats_server.url, config, tmp_path / "data")
            await wait_for(log, "r-evo-kill", RunCompleted)
            events = [r.event for r in await log.read_run("r-evo-kill")]
        finally:
            worker.kill()
            worker.wait(10)
            await log.close()
        requests = model.requests_total
    ids = Counter(e.event_id for e in events)
    assert [i for i, n in ids.items() if n > 1] == []
    responses = Counter(e.call_id for e in events if isinstance(e, ModelResponded))
    assert all(n == 1 for n in responses.values())
    # 2 rounds x (policy + summary + 3 verifiers + aggregation) = 12 calls; only the
    # call interrupted by the kill may be made a second time.
    assert len(responses) == 12
    assert requests <= len(responses) + 1
    assert [r.round for r in events if isinstance(r, RoundCompleted)] == [0, 1]
