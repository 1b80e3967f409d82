"""A cancellation stops a run's deciders at once, live and in replay verification alike
(handlers/lifecycle.py: no decider runs on an event whose history holds a cancellation)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from engine.app.operations import submission
from engine.runtime.cancellation import cancel_run
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.testing.harness import make_settings, new_memory_log, services
from events.model import ChatMessage, ModelResponded, SamplingParams
from events.run import RunCancelled
from handlers.ports import ModelReply
from handlers.routes import ROUTES
from handlers.run_settings import ModelSpec
from replay.verify import verify_run
from tests.replay.support import CODE_THEN_ANSWER


class CancelledWhileThinking:
    """A model whose first call is cancelled from elsewhere while it runs; the reply still comes back."""

    def __init__(self, log: Any, run_id: str) -> None:
        self.log, self.run_id, self.calls = log, run_id, 0

    def client_for(self, role: str, spec: ModelSpec, *, branch: str | None = None) -> CancelledWhileThinking:
        return self

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> ModelReply:
        self.calls += 1
        await cancel_run(self.log, self.run_id, reason="the user gave up")
        return ModelReply(text=CODE_THEN_ANSWER[0], model="fake")


async def test_a_reply_recorded_after_a_cancellation_is_decided_no_further_and_verifies() -> None:
    """`apollo cancel` lands while a model call runs: the reply is recorded, nothing follows it, and it verifies."""
    log = new_memory_log()
    model = CancelledWhileThinking(log, "r-cancel")
    svc = services(make_settings(), models=model)
    await log.append(submission("r-cancel", "What is 6 times 7?", ground_truth="42"))
    dispatcher = Dispatcher(log, ROUTES, svc, DispatcherSettings(pull_timeout=0.05, backoff_base=0.0))
    task = asyncio.create_task(dispatcher.run())
    try:
        for _ in range(500):
            records = await log.read_run("r-cancel")
            if any(isinstance(r.event, ModelResponded) for r in records):
                break
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.5)  # time for the reply's deciders, were they to run
    finally:
        dispatcher.stop()
        await asyncio.wait_for(task, 15)
    records = await log.read_run("r-cancel")
    types = [type(r.event) for r in records]
    assert types[-2:] == [RunCancelled, ModelResponded] and model.calls == 1
    result = await verify_run(records)
    assert result.ok, result.first_difference and result.first_difference.describe()
