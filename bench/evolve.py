"""Evolve throughput: K=3 branches x 5 verifiers at 50 ms per model call.

Measures rounds per minute of the event-driven evolve workflow (branches and
verifiers concurrent, in-memory log, real HTTP model client against the fake
OpenAI-compatible server) against the same calls made strictly one after another,
as the reference does (its branches run sequentially and, with its config bug,
so does everything else). Both are measured in the same run; the ratio is printed.

    .venv/bin/python bench/evolve.py [--rounds 2] [--latency-ms 50]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.app.bootstrap import settings_for_run
from engine.app.log_setup import configure_logging
from engine.app.operations import submission
from engine.config.settings import validate
from engine.eventlog.memory import InMemoryEventLog
from engine.models.fake_server import FakeOpenAIServer
from engine.models.router import ModelRouter
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.testing.harness import ExactGrader
from engine.tools.registry import ToolRegistry
from events import ChatMessage, RoundCompleted, RunCompleted, RunFailed, SamplingParams
from handlers.context import Services
from handlers.routes import ROUTES
from handlers.run_settings import ModelSpec

BRANCHES = 3
VERIFIERS = 5


def reply(messages: list[dict[str, Any]]) -> str:
    prompt = "\n".join(str(m.get("content", "")) for m in messages)
    if prompt.startswith("### Role"):
        return "**Strategy:** multiply."
    if prompt.startswith("You are a verifier"):
        return "<report>Correct. \\boxed{1}</report>"
    if prompt.startswith("You merge"):
        return "<report>All agree. \\boxed{1}</report>"
    return "<answer>\\boxed{42}</answer>"


async def evented(base_url: str, rounds: int) -> float:
    """Seconds for one evolve run with all branches through the engine."""
    model = {"model": "fake-model", "base_url": base_url, "max_retries": 0}
    settings = validate(
        {
            "models": {"policy": model},
            "evolve": {"rounds": rounds, "verifiers": VERIFIERS},
            "branches": [{"branch_id": f"b{i}", "policy": model} for i in range(BRANCHES)],
        }
    )
    router = ModelRouter()
    services = Services(
        models=router,
        tools=ToolRegistry({}),
        grader=ExactGrader(),
        settings_for_run=lambda overrides: settings_for_run(settings, overrides),
    )
    log = InMemoryEventLog()
    dispatcher = Dispatcher(
        log, ROUTES, services, DispatcherSettings(pull_timeout=0.01, concurrency=128)
    )
    task = asyncio.create_task(dispatcher.run())
    started = time.perf_counter()
    await log.append(
        submission("bench-evo", "What is 6 times 7?", ground_truth="42", workflow="evolve")
    )
    await finished(log, "bench-evo")
    elapsed = time.perf_counter() - started
    done = [r for r in await log.read_run("bench-evo") if isinstance(r.event, RoundCompleted)]
    assert len(done) == BRANCHES * rounds, len(done)
    dispatcher.stop()
    await task
    await router.close()
    return elapsed


async def finished(log: InMemoryEventLog, run_id: str, limit_s: float = 300.0) -> None:
    """Wait for the run to complete; a failed or stuck run stops the benchmark with its reason."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        for record in await log.read_run(run_id):
            if isinstance(record.event, RunCompleted):
                return
            if isinstance(record.event, RunFailed):
                raise SystemExit(f"the evolve run failed: {record.event.reason}")
        await asyncio.sleep(0.005)  # polling the in-memory log is the simplest wait
    raise SystemExit(f"the evolve run did not complete within {limit_s:.0f} s")


async def sequential(base_url: str, rounds: int) -> float:
    """Seconds for the same calls made one after another."""
    router = ModelRouter()
    client = router.client_for("policy", ModelSpec(model="fake-model", base_url=base_url, max_retries=0))
    params = SamplingParams()
    started = time.perf_counter()
    for _ in range(BRANCHES * rounds):
        await client.complete(
            [ChatMessage(role="user", content="Problem: What is 6 times 7?")], params
        )
        await client.complete([ChatMessage(role="user", content="### Role\nsummarize")], params)
        for _ in range(VERIFIERS):
            await client.complete([ChatMessage(role="user", content="You are a verifier.")], params)
        await client.complete([ChatMessage(role="user", content="You merge the reports")], params)
    elapsed = time.perf_counter() - started
    await router.close()
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args()
    configure_logging(level="error")
    async with FakeOpenAIServer(reply, latency_ms=args.latency_ms) as server:
        await evented(server.base_url, 1)  # warm-up: imports, connections
        base = await sequential(server.base_url, args.rounds)
        fast = await evented(server.base_url, args.rounds)
        calls = server.requests_total
    total = BRANCHES * args.rounds
    print(
        f"K={BRANCHES} branches, {VERIFIERS} verifiers, {args.rounds} rounds each, "
        f"{args.latency_ms:.0f} ms per call ({calls} requests in all)"
    )
    print(f"sequential (reference-like): {total / base * 60:8.1f} rounds/min  ({base:.2f} s)")
    print(f"apollo evolve (evented):     {total / fast * 60:8.1f} rounds/min  ({fast:.2f} s)")
    print(f"speed-up: {base / fast:.2f}x (target >= 3x)")


if __name__ == "__main__":
    asyncio.run(main())
