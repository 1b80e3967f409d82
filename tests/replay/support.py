"""Shared helpers of the replay tests: golden files and whole episodes on a log."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from engine.app.operations import submission
from engine.cli.replay import read_history
from engine.testing.harness import EchoPython, make_settings, run_until_done, services
from events.record import Recorded
from tests.episode.test_episode_flow import Replies

HISTORIES = Path(__file__).parent / "histories"

CODE_THEN_ANSWER = [
    "<think>compute</think><python_code>print(6*7)</python_code>",
    "<think>done</think><answer>\\boxed{42}</answer>",
]


def golden(name: str) -> list[Recorded]:
    return read_history(HISTORIES / f"{name}.ndjson")


async def run_episode(log: Any, run_id: str, replies: list[str], *, raw_settings: dict | None = None,
                      models: Any = None) -> tuple[list[Recorded], EchoPython]:
    """One reasoning episode through the real routing table on ``log``."""
    python = EchoPython()
    svc = services(make_settings(raw_settings), models=models or Replies(replies), tools={"python_code": python})
    await log.append(submission(run_id, "What is 6 times 7?", ground_truth="42"))
    await run_until_done(log, svc, [run_id])
    return await log.read_run(run_id), python


async def run_forked(log: Any, svc: Any, run_ids: list[str], *, timeout: float = 30.0) -> None:
    """Like the harness's run_until_done, with the fork-aware dispatcher `apollo fork` uses."""
    import asyncio

    from engine.cli.replay import ForkAwareDispatcher
    from engine.runtime.dispatcher import DispatcherSettings
    from engine.testing.harness import _finished
    from handlers.routes import ROUTES

    dispatcher = ForkAwareDispatcher(log, ROUTES, svc, DispatcherSettings(pull_timeout=0.05, backoff_base=0.0))
    task = asyncio.create_task(dispatcher.run())
    try:
        for _ in range(int(timeout / 0.02)):
            if all([await _finished(log, run_id) for run_id in run_ids]):
                return
            await asyncio.sleep(0.02)
        raise AssertionError(f"runs did not finish: {run_ids}")
    finally:
        dispatcher.stop()
        await asyncio.wait_for(task, 15)
