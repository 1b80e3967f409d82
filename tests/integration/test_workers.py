"""Horizontal workers: separate `apollo worker` processes share one stream with no duplicate effects."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from engine.models.fake_server import FakeOpenAIServer
from engine.nats.jetstream import JetStreamEventLog
from events.model import ModelCallRequested
from events.tool import ToolCallRequested, ToolReturned
from tests.deploy.processes import (
    assert_recorded_once,
    set_ack_wait,
    spawn_worker,
    submit,
    wait_finished,
    wait_pulling,
)

pytestmark = [pytest.mark.nats, pytest.mark.timeout(180)]

ANSWER = "<answer>\\boxed{4}</answer>"
SLEEPY_CODE = "<python_code>\nimport time\ntime.sleep(3)\nprint('TOOL' + 'DONE')\n</python_code>"


def answer_after_tool(messages: list[dict[str, Any]]) -> str:
    """Run the sleeping snippet first; answer once its output is in the prompt."""
    seen = " ".join(str(m.get("content")) for m in messages)
    return ANSWER if "TOOLDONE" in seen else SLEEPY_CODE


@pytest.fixture
async def event_log(nats_server) -> AsyncIterator[JetStreamEventLog]:
    log = await JetStreamEventLog.connect(nats_server.url)
    try:
        yield log
    finally:
        await log.close()


async def test_three_worker_processes_share_the_work_without_duplicates(nats_server, event_log, tmp_path: Path) -> None:
    """Every worker handles some events; every event, run start and model reply is recorded once."""
    async with FakeOpenAIServer(lambda messages: ANSWER, latency_ms=100) as fake:
        workers = [
            spawn_worker(nats_server.url, tmp_path, f"w{i}", model_url=fake.base_url, concurrency=4) for i in range(3)
        ]
        try:
            await wait_pulling(event_log.js, 3)
            run_ids = [f"spread-{i}" for i in range(12)]
            await submit(event_log, run_ids)
            await wait_finished(event_log, run_ids)
        finally:
            for worker in workers:
                worker.stop()
        await assert_recorded_once(event_log, run_ids)
        counts = {worker.name: len(worker.handled()) for worker in workers}
        assert all(n > 0 for n in counts.values()), counts
        assert fake.requests_total == len(run_ids)


async def _restart_after_kill(
    nats_server: Any, event_log: JetStreamEventLog, tmp_path: Path, fake: FakeOpenAIServer, started: Any
) -> None:
    """Kill the only worker once ``started()`` is true, start another, and finish the run."""
    first = spawn_worker(nats_server.url, tmp_path, "first", model_url=fake.base_url)
    try:
        await wait_pulling(event_log.js, 1)
        await submit(event_log, ["victim"])
        for _ in range(600):
            if await started():
                await asyncio.sleep(1.0)  # well inside the 2-3 s step
                break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the step never started")
    finally:
        first.kill()
    await asyncio.sleep(1.5)  # the dead worker's pull requests expire
    second = spawn_worker(nats_server.url, tmp_path, "second", model_url=fake.base_url)
    try:
        await wait_pulling(event_log.js, 1)
        await set_ack_wait(event_log.js, 5.0)  # longer than one step, short enough for a test
        await wait_finished(event_log, ["victim"])
    finally:
        second.stop()


async def test_worker_killed_during_a_model_call_redoes_it_at_most_once(nats_server, event_log, tmp_path: Path) -> None:
    """SIGKILL mid model call: a new worker redoes the call once and the reply is recorded once."""
    async with FakeOpenAIServer(lambda messages: ANSWER, latency_ms=2000) as fake:

        async def calling() -> bool:
            return fake.in_flight > 0

        await _restart_after_kill(nats_server, event_log, tmp_path, fake, calling)
        events = await assert_recorded_once(event_log, ["victim"])
        assert sum(isinstance(e, ModelCallRequested) for e in events) == 1
        assert 1 <= fake.requests_total <= 2


async def test_worker_killed_during_a_tool_call_redoes_it_at_most_once(nats_server, event_log, tmp_path: Path) -> None:
    """SIGKILL mid python snippet: the tool runs again at most once and its result is recorded once."""
    async with FakeOpenAIServer(answer_after_tool) as fake:

        async def tool_running() -> bool:
            events = [r.event for r in await event_log.read_run("victim")]
            return any(isinstance(e, ToolCallRequested) for e in events)

        await _restart_after_kill(nats_server, event_log, tmp_path, fake, tool_running)
        events = await assert_recorded_once(event_log, ["victim"])
        returned = [e for e in events if isinstance(e, ToolReturned)]
        assert len(returned) == 1
        assert "TOOLDONE" in str(returned[0])
        assert fake.requests_total == 2  # the code step and the answer: model calls are not redone
