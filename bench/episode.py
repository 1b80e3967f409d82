"""Episode benchmark: the engine (JetStream + dispatcher) vs a plain in-process loop.

Both run the same two-step episodes (a python call, then an answer) against the same
OpenAI-compatible fake model over HTTP, the same instant python tool and the same grader.
The in-process loop calls them directly with no bus; the engine records every step as
events. Printed: episodes/s for each with the CPU time this process spent per episode
(the fake model and nats-server run in their own processes), the ratio engine/loop,
and the engine's per-step overhead at 0 ms model latency. Target: >= 0.9x at 50 ms
latency, concurrency 1 and 32. Where rate x CPU/ep reaches ~1000 ms/s the process is
bound by one core, not by the model's latency.

    .venv/bin/python bench/episode.py [--episodes 64] [--quick]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import nats_server  # noqa: E402
from engine.commands import submission  # noqa: E402
from engine.config import validate  # noqa: E402
from engine.dispatcher import Dispatcher, DispatcherSettings  # noqa: E402
from engine.eventlog.jetstream import JetStreamEventLog  # noqa: E402
from engine.logging import configure_logging  # noqa: E402
from engine.models.fake_server import FakeOpenAIServer  # noqa: E402
from engine.models.router import ModelRouter  # noqa: E402
from events.model import SamplingParams  # noqa: E402
from handlers.episode.parsing import parse_action  # noqa: E402
from handlers.episode.prompts import HistoryStep, render_policy_prompt  # noqa: E402
from handlers.grading.extraction import extract_final_answer  # noqa: E402
from handlers.table import ROUTES  # noqa: E402
from tests.support.engine_harness import EchoPython, ExactGrader, services  # noqa: E402


def policy(messages) -> str:  # noqa: ANN001 - the fake server's reply function
    prompt = messages[-1]["content"] if isinstance(messages[-1], dict) else messages[-1].content
    if "<tool_response>{" in prompt:
        return "<think>the program printed 42</think><answer>\\boxed{42}</answer>"
    return "<think>compute it</think><python_code>print(6*7)</python_code>"


WARM_UP = 2
"""Untimed episodes first on both sides: connections opened, code paths warm."""


def settings_for(url: str):  # noqa: ANN201
    return validate({"models": {"policy": {"model": "fake", "base_url": url, "max_concurrency": 256}},
                     "episode": {"max_steps": 4}})


async def in_process(url: str, episodes: int, concurrency: int) -> tuple[float, float]:
    """The baseline: the same episode logic as direct calls, nothing recorded."""
    settings = settings_for(url)
    router = ModelRouter()
    client = router.client_for("policy", "fake", settings.run_settings())
    tool, grader = EchoPython(), ExactGrader()
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            history: list[HistoryStep] = []
            for step in range(1, 5):
                messages = render_policy_prompt("What is 6 times 7?", tools=["python_code"], history=history,
                                                force_answer=step == 4)
                reply = await client.complete(messages, SamplingParams())
                action = parse_action(reply.text, tools=("python_code",))
                if action.kind == "answer":
                    await grader.grade(extract_final_answer(reply.text) or "", "42", "exact")
                    return
                result = await tool.run(action.tool_input or "", {})
                observation = f"<tool_response>{result.text}</tool_response>"
                history.append(HistoryStep(action=reply.text, observation=observation))

    await asyncio.gather(*(one() for _ in range(WARM_UP)))
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one() for _ in range(episodes)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    await router.close()
    return episodes / elapsed, cpu / episodes * 1000


async def engine(url: str, nats_url: str, episodes: int, concurrency: int, tag: str) -> tuple[float, float]:
    """Episodes submitted ``concurrency`` at a time through JetStream and the dispatcher."""
    settings = settings_for(url)
    log = await JetStreamEventLog.connect(nats_url)
    router = ModelRouter()
    svc = services(settings, models=router, tools={"python_code": EchoPython()}, grader=ExactGrader())
    dispatcher = Dispatcher(log, ROUTES, svc, DispatcherSettings(concurrency=256))
    dispatching = asyncio.create_task(dispatcher.run())
    finished: dict[str, asyncio.Future[None]] = {}

    async def completed(msg) -> None:  # noqa: ANN001 - nats callback
        future = finished.get(msg.subject.split(".")[2])
        if future is not None and not future.done():
            future.set_result(None)

    watch = await log.nc.subscribe("apollo.run.*.run.completed", cb=completed)
    gate = asyncio.Semaphore(concurrency)

    async def one(run_id: str) -> None:
        async with gate:
            finished[run_id] = asyncio.get_running_loop().create_future()
            await log.append(submission(run_id, "What is 6 times 7?", ground_truth="42"))
            await asyncio.wait_for(finished[run_id], 120)

    await asyncio.gather(*(one(f"bench-{tag}-warm-{i}") for i in range(WARM_UP)))
    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(one(f"bench-{tag}-{i}") for i in range(episodes)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    await watch.unsubscribe()
    dispatcher.stop()
    await dispatching
    await router.close()
    await log.close()
    return episodes / elapsed, cpu / episodes * 1000


SCRIPT = {"rules": [
    {"match": "<tool_response>\\{", "reply": "<think>the program printed 42</think><answer>\\boxed{42}</answer>"},
    {"reply": "<think>compute it</think><python_code>print(6*7)</python_code>"},
]}
"""The same replies as :func:`policy`, for the fake server in its own process."""


@contextlib.contextmanager
def model_process(latency: int) -> Iterator[str]:
    """The fake model in its own process, as a real model server is (its CPU is not ours)."""
    with tempfile.TemporaryDirectory() as folder:
        script = Path(folder) / "episode.json"
        script.write_text(json.dumps(SCRIPT))
        process = subprocess.Popen(  # noqa: S603 - our own module
            [sys.executable, "-m", "engine.models.fake_server", "--port", "0", "--script", str(script),
             "--latency-ms", str(latency), "--model", "fake"],
            cwd=Path(__file__).resolve().parent.parent, stdout=subprocess.PIPE, text=True,
        )
        try:
            url = process.stdout.readline().strip() if process.stdout else ""
            if not url.startswith("http"):
                raise SystemExit(f"fake model server did not start: {url!r}")
            yield url
        finally:
            process.terminate()
            process.wait(20)


@contextlib.asynccontextmanager
async def model_server(latency: int, separate: bool) -> AsyncIterator[str]:
    if separate:
        with model_process(latency) as url:
            yield url
    else:
        async with FakeOpenAIServer(policy, latency_ms=latency) as fake:
            yield fake.base_url


async def main(episodes: int, latencies: list[int], concurrencies: list[int], separate: bool) -> None:
    configure_logging(level="error")
    print(f"fake model {'in its own process' if separate else 'inside this process'}", flush=True)
    with nats_server() as server:
        for latency in latencies:
            async with model_server(latency, separate) as url:
                for concurrency in concurrencies:
                    count = episodes if concurrency > 1 else max(8, episodes // 2)
                    loop_rate, loop_cpu = await in_process(url, count, concurrency)
                    engine_rate, engine_cpu = await engine(url, server.url, count, concurrency,
                                               f"{latency}-{concurrency}-{time.monotonic_ns()}")
                    line = (f"latency {latency:>3} ms  concurrency {concurrency:>2}:"
                            f"  loop {loop_rate:6.1f} ep/s ({loop_cpu:4.1f} ms CPU/ep)"
                            f"  engine {engine_rate:6.1f} ep/s ({engine_cpu:4.1f} ms CPU/ep)"
                            f"  ratio {engine_rate / loop_rate:4.2f}x")
                    if latency == 0 and concurrency == 1:
                        overhead = (1 / engine_rate - 1 / loop_rate) / 2 * 1000
                        line += f"   engine overhead {overhead:.2f} ms per step"
                    print(line, flush=True)
    print("\ntarget: ratio >= 0.90x at 50 ms latency (both concurrencies)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="fewer episodes")
    parser.add_argument("--same-process-model", action="store_true",
                        help="serve the fake model inside the benchmark's process (its CPU then competes)")
    args = parser.parse_args()
    asyncio.run(main(16 if args.quick else args.episodes, [0, 50], [1, 32], not args.same_process_model))
