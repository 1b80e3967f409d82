"""Episode benchmark: the engine (JetStream + dispatcher) vs a plain in-process loop.

Both run the same two-step episodes (a python call, then an answer) against the same
OpenAI-compatible fake model over HTTP, the same instant python tool and the same grader.
The in-process loop calls them directly with no bus; the engine records every step as
events. The engine runs twice: dispatching in the benchmark's own process, then as one
worker process per core (``--workers``), which the single-threaded loop cannot use.
Printed: episodes/s with the CPU time spent per episode (the engine's worker processes
counted; the fake model and nats-server run in their own processes), the ratio
engine/loop, and the engine's per-step overhead at 0 ms model latency. Target: >= 0.9x
at 50 ms latency, concurrency 1 and 32. Where rate x CPU/ep reaches ~1000 ms/s a process
is bound by one core, not by the model's latency.

    .venv/bin/python bench/episode.py [--episodes 64] [--quick] [--latencies 0 50] [--workers 0 2]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import signal
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


async def serve_worker(url: str, nats_url: str) -> None:
    """One engine worker: the dispatcher with the benchmark's services, until stopped."""
    configure_logging(level="error")
    log = await JetStreamEventLog.connect(nats_url)
    router = ModelRouter()
    svc = services(settings_for(url), models=router, tools={"python_code": EchoPython()}, grader=ExactGrader())
    dispatcher = Dispatcher(log, ROUTES, svc, DispatcherSettings(concurrency=256))
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, dispatcher.stop)
    print("pulling", flush=True)
    sys.stdout = open(os.devnull, "w")  # noqa: ASYNC230, SIM115 - nobody reads the pipe from here on
    await dispatcher.run()
    await router.close()
    await log.close()


@contextlib.contextmanager
def worker_processes(count: int, url: str, nats_url: str) -> Iterator[list[int]]:
    """``count`` engine workers in their own processes (none: this process dispatches)."""
    processes = [
        subprocess.Popen(  # noqa: S603 - this very script
            [sys.executable, __file__, "--serve-worker", url, nats_url], stdout=subprocess.PIPE, text=True
        )
        for _ in range(count)
    ]
    try:
        for process in processes:  # each says when it pulls, then writes nothing more
            if process.stdout is None or process.stdout.readline().strip() != "pulling":
                raise SystemExit("a benchmark worker did not start")
        yield [process.pid for process in processes]
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(30)
            except subprocess.TimeoutExpired:
                process.kill()


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of other processes so far (0 where /proc is missing)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


async def engine(url: str, nats_url: str, episodes: int, concurrency: int, tag: str,
                 workers: int = 0) -> tuple[float, float]:
    """Episodes submitted ``concurrency`` at a time through JetStream and the dispatcher.

    With ``workers`` > 0 the dispatching happens in that many worker processes (their
    CPU is counted with this process's); otherwise in this process.
    """
    with worker_processes(workers, url, nats_url) as pids:
        return await _engine(url, nats_url, episodes, concurrency, tag, pids)


async def _engine(url: str, nats_url: str, episodes: int, concurrency: int, tag: str,
                  pids: list[int]) -> tuple[float, float]:
    settings = settings_for(url)
    log = await JetStreamEventLog.connect(nats_url)
    router = ModelRouter()
    svc = services(settings, models=router, tools={"python_code": EchoPython()}, grader=ExactGrader())
    dispatcher = Dispatcher(log, ROUTES, svc, DispatcherSettings(concurrency=256))
    dispatching = asyncio.create_task(dispatcher.run()) if not pids else None
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

    await asyncio.gather(*(one(f"bench-{tag}-warm-{i}") for i in range(max(WARM_UP, 2 * len(pids)))))
    started, cpu = time.perf_counter(), time.process_time() + cpu_seconds(pids)
    await asyncio.gather(*(one(f"bench-{tag}-{i}") for i in range(episodes)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() + cpu_seconds(pids) - cpu
    await watch.unsubscribe()
    dispatcher.stop()
    if dispatching is not None:
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


async def main(episodes: int, latencies: list[int], concurrencies: list[int], separate: bool,
               worker_counts: list[int]) -> None:
    configure_logging(level="error")
    print(f"fake model {'in its own process' if separate else 'inside this process'}; "
          f"{os.cpu_count()} CPU cores", flush=True)
    with nats_server() as server:
        for latency in latencies:
            async with model_server(latency, separate) as url:
                for concurrency in concurrencies:
                    count = episodes if concurrency > 1 else max(8, episodes // 2)
                    loop_rate, loop_cpu = await in_process(url, count, concurrency)
                    print(f"latency {latency:>3} ms  concurrency {concurrency:>2}:"
                          f"  loop {loop_rate:6.1f} ep/s ({loop_cpu:4.1f} ms CPU/ep)", flush=True)
                    for workers in worker_counts:
                        rate, cpu = await engine(url, server.url, count, concurrency,
                                                 f"{latency}-{concurrency}-{workers}-{time.monotonic_ns()}", workers)
                        where = f"{workers} worker processes" if workers else "dispatcher in this process"
                        line = (f"    engine, {where:<26} {rate:6.1f} ep/s ({cpu:4.1f} ms CPU/ep)"
                                f"  ratio {rate / loop_rate:4.2f}x")
                        if latency == 0 and concurrency == 1 and not workers:
                            line += f"   overhead {(1 / rate - 1 / loop_rate) / 2 * 1000:.2f} ms per step"
                        print(line, flush=True)
    print("\ntarget: ratio >= 0.90x at 50 ms latency (both concurrencies)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--episodes", type=int, default=64)
    parser.add_argument("--quick", action="store_true", help="fewer episodes")
    parser.add_argument("--latencies", type=int, nargs="+", default=[0, 50], help="model latencies in ms")
    parser.add_argument("--workers", type=int, nargs="+", default=[0, os.cpu_count() or 1],
                        help="engine variants: 0 = dispatch in the benchmark's process, N = N worker processes")
    parser.add_argument("--same-process-model", action="store_true",
                        help="serve the fake model inside the benchmark's process (its CPU then competes)")
    parser.add_argument("--serve-worker", nargs=2, metavar=("MODEL_URL", "NATS_URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_worker:
        asyncio.run(serve_worker(*args.serve_worker))
    else:
        asyncio.run(main(16 if args.quick else args.episodes, args.latencies, [1, 32], not args.same_process_model,
                         args.workers))
