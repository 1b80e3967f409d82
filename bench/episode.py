"""Episode benchmark: the engine (JetStream + dispatcher) vs a plain in-process loop.

Both run the same two-step episodes (a python call, then an answer) against the same
OpenAI-compatible fake model over HTTP, the same instant python tool and the same grader.
The in-process loop calls them directly with no bus; the engine records every step as
events. The engine runs twice: dispatching in the benchmark's own process, then as one
worker process per core (``--workers``), which the single-threaded loop cannot use.

This machine's speed drifts by tens of percent from one second to the next, so each
configuration runs ``--repeats`` rounds of loop-then-engine back to back and reports the
median of the per-round ratios. Each side first runs a full wave of ``concurrency``
untimed episodes (connections opened), and the timed part is long enough to be past the
first waves (``--episodes`` above concurrency 1).

Printed per row: episodes/s, the CPU time spent per episode (the engine's worker
processes counted; the fake model and nats-server run in their own processes), how many
of the machine's cores were busy (all processes), the ratio engine/loop and the engine's
CPU per episode over the loop's (each the median of the rounds'); plus the engine's
per-step overhead at 0 ms model latency. Targets: >= 0.9x at 50 ms latency, concurrency 1
and 32; CPU per episode at most 2x the loop's (issue #33). With ``--hops``, each engine
row is followed by where its episodes' time went: the median gap, in the server's own
timestamps, between consecutive events of a sample of the last round's runs, per kind of
step. Where rate x CPU/ep reaches
~1000 ms/s a process is bound by one core, not by the model's latency; where the busy
cores reach the machine's count, the machine is the limit. Below each engine row at a
concurrency above 1, the same arithmetic is done for the target: the cores the row's
measured CPU per episode would take at 0.9x the loop's rate, per dispatching process and
machine-wide (nats-server and the model server included), against what one process and
this machine can give. It is an estimate: CPU per episode falls a little as load rises.

With ``--stub-model``, an extra row runs the in-process engine with the model replaced by
a stub inside the process: it waits the same latency and replies the same, with no HTTP
and next to no CPU. Its ratio is still taken against the loop with the real HTTP model,
so it shows what is left of the gap once the model calls cost nothing: the bus and the
deciders alone. With ``--jitter-ms J`` each model call (fake or stub) waits its latency
+/- up to J ms, drawn uniformly from the same seeded sequence on every run, so the runs
do not all get their replies at once.

Every process here runs as an engine worker does: its start-up heap frozen out of the
garbage collector's scans (``engine.runtime.processes.freeze_startup_heap``). With
``--unfrozen-heap``, an extra row runs the in-process engine with the heap unfrozen, and
the frozen/unfrozen ratio of the two engine rows is printed.

    .venv/bin/python bench/episode.py [--episodes 320] [--quick] [--latencies 0 50] [--concurrencies 1 32]
        [--workers 0 2] [--repeats 3] [--hops] [--unfrozen-heap] [--stub-model] [--jitter-ms 0]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import itertools
import os
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import NamedTuple

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._common import fake_model_process, nats_server
from engine.app.log_setup import configure_logging
from engine.app.operations import submission, submit
from engine.config.settings import validate
from engine.console.argtypes import whole_number
from engine.models.fake_server import FakeOpenAIServer, ReplyDelay
from engine.models.router import ModelRouter
from engine.nats.jetstream import JetStreamEventLog
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.runtime.processes import freeze_startup_heap
from engine.testing.harness import EchoPython, ExactGrader, services
from events.model import SamplingParams
from handlers.episode.parsing import parse_action
from handlers.episode.prompts import HistoryStep, render_policy_prompt
from handlers.grading.extraction import extract_final_answer
from handlers.ports import ModelReply, ToolOptions
from handlers.routes import ROUTES
from handlers.run_settings import ModelSpec


def policy(messages) -> str:  # the fake server's reply function
    prompt = messages[-1]["content"] if isinstance(messages[-1], dict) else messages[-1].content
    if "<tool_response>{" in prompt:
        return "<think>the program printed 42</think><answer>\\boxed{42}</answer>"
    return "<think>compute it</think><python_code>print(6*7)</python_code>"


class StubModel:
    """Replies as :func:`policy` after the fake's waits: no HTTP, next to no CPU."""

    def __init__(self, latency_ms: int, jitter_ms: int = 0) -> None:
        self._delay = ReplyDelay(latency_ms, jitter_ms)

    async def complete(self, messages, params) -> ModelReply:  # the ModelClient port
        del params
        await asyncio.sleep(self._delay.next_s())
        return ModelReply(text=policy(messages), model="stub")

    def client_for(self, role: str, spec: ModelSpec, *, branch: str | None = None) -> StubModel:  # the router port
        return self

    async def close(self) -> None:
        return None


def warm_up_count(concurrency: int) -> int:
    """Untimed episodes first on both sides: a full wave, so every connection is open."""
    return max(2, concurrency)


def settings_for(url: str):
    return validate(
        {"models": {"policy": {"model": "fake", "base_url": url, "max_concurrency": 256}}, "episode": {"max_steps": 4}}
    )


async def in_process(url: str, episodes: int, concurrency: int) -> Measured:
    """The baseline: the same episode logic as direct calls, nothing recorded."""
    settings = settings_for(url)
    router = ModelRouter()
    client = router.client_for("policy", settings.model_for("policy"))
    tool, grader = EchoPython(), ExactGrader()
    gate = asyncio.Semaphore(concurrency)

    async def one() -> None:
        async with gate:
            history: list[HistoryStep] = []
            for step in range(1, 5):
                messages = render_policy_prompt(
                    "What is 6 times 7?", tools=["python_code"], history=history, force_answer=step == 4
                )
                reply = await client.complete(messages, SamplingParams())
                action = parse_action(reply.text, tools=("python_code",))
                if action.kind == "answer":
                    await grader.grade(extract_final_answer(reply.text) or "", "42", "exact")
                    return
                result = await tool.run(action.tool_input or "", ToolOptions())
                observation = f"<tool_response>{result.text}</tool_response>"
                history.append(HistoryStep(action=reply.text, observation=observation))

    await asyncio.gather(*(one() for _ in range(warm_up_count(concurrency))))
    started, cpu, busy = time.perf_counter(), time.process_time(), machine_busy_seconds()
    await asyncio.gather(*(one() for _ in range(episodes)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    busy = machine_busy_seconds() - busy
    await router.close()
    return Measured(episodes / elapsed, cpu / episodes * 1000, busy / elapsed)


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
    freeze_startup_heap()
    print("pulling", flush=True)
    sys.stdout = open(os.devnull, "w")  # noqa: ASYNC230, SIM115 - nobody reads the pipe from here on
    await dispatcher.run()
    await router.close()
    await log.close()


@contextlib.contextmanager
def worker_processes(count: int, url: str, nats_url: str) -> Iterator[list[int]]:
    """``count`` engine workers in their own processes (none: this process dispatches)."""
    processes = [
        subprocess.Popen(  # this very script
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


class Variant(NamedTuple):
    """One way of running the engine side."""

    workers: int
    """0: dispatch in the benchmark's process; N: N worker processes."""
    heap_frozen: bool = True
    model_stubbed: bool = False
    """The engine calls :class:`StubModel` in its own process instead of the fake over HTTP."""

    @property
    def label(self) -> str:
        where = f"{self.workers} worker processes" if self.workers else "dispatcher in this process"
        if self.model_stubbed:
            return f"{where}, model stubbed (no HTTP)"
        return where if self.heap_frozen else f"{where}, heap not frozen"


@contextlib.contextmanager
def heap(frozen: bool) -> Iterator[None]:
    """Run the block with this process's start-up heap unfrozen, when asked; frozen after."""
    if not frozen:
        gc.unfreeze()
    try:
        yield
    finally:
        if not frozen:
            freeze_startup_heap()


class Measured(NamedTuple):
    """One timed run of one side."""

    rate: float
    """Episodes per second."""
    cpu_ms: float
    """CPU milliseconds per episode of the side's own processes."""
    busy_cores: float
    """Cores the whole machine kept busy meanwhile (every process, ours or not)."""
    hops: dict[str, float] | None = None
    """Median server-time gap (ms) from one event to the next, by (event -> next event)."""
    gc_ms: float = 0.0
    """Garbage collection in this process per episode, in ms (in-process engine only)."""
    gc_pause_ms: float = 0.0
    """This process's longest garbage collection, in ms."""


class CollectorClock:
    """Times this process's garbage collections while the block runs (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.total = self.longest = self._started = 0.0

    def __enter__(self) -> CollectorClock:
        gc.callbacks.append(self._tick)
        return self

    def __exit__(self, *_: object) -> None:
        gc.callbacks.remove(self._tick)

    def _tick(self, phase: str, _info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
            return
        took = time.perf_counter() - self._started
        self.total += took
        self.longest = max(self.longest, took)


def machine_busy_seconds() -> float:
    """CPU seconds the machine has spent busy since boot, over all cores (0 without /proc)."""
    try:
        fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    except OSError:
        return 0.0
    user, nice, system, _idle, _iowait, irq, softirq = (int(value) for value in fields[:7])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def cpu_seconds(pids: list[int]) -> float:
    """User + system CPU seconds of other processes so far (0 where /proc is missing)."""
    total = 0.0
    for pid in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    return total


async def engine(  # one knob per benchmark dimension
    url: str,
    nats_url: str,
    episodes: int,
    concurrency: int,
    tag: str,
    workers: int = 0,
    *,
    hops: bool = False,
    stub: StubModel | None = None,
) -> Measured:
    """Episodes submitted ``concurrency`` at a time through JetStream and the dispatcher.

    With ``workers`` > 0 the dispatching happens in that many worker processes (their
    CPU is counted with this process's); otherwise in this process, calling ``stub``
    instead of the model at ``url`` when one is given. With ``hops`` the result carries
    the median gap between consecutive events of a sample of the runs.
    """
    if stub is not None and workers:
        raise ValueError("the stubbed model runs only with the dispatcher in this process")
    with worker_processes(workers, url, nats_url) as pids:
        return await _engine(url, nats_url, episodes, concurrency, tag, pids, hops, stub)


HOP_SAMPLE_RUNS = 40
"""Runs whose events are read back for ``--hops`` (spread over the timed ones)."""


async def hop_gaps(log: JetStreamEventLog, run_ids: list[str]) -> dict[str, float]:
    """Median gap (ms) between consecutive events of each run, by transition.

    The gaps come from the server's timestamps, so they show where an episode waits
    (a model call, a decision, an acknowledgement) without touching the timed code.
    """
    gaps: dict[str, list[float]] = {}
    for run_id in run_ids[:: max(1, len(run_ids) // HOP_SAMPLE_RUNS)]:
        reader = await log.js.pull_subscribe(f"apollo.run.{run_id}.>", stream=log.stream)
        try:
            messages = await reader.fetch(256, timeout=2)
        finally:
            await reader.unsubscribe()
        messages.sort(key=lambda msg: msg.metadata.sequence.stream)
        for before, after in itertools.pairwise(messages):
            step = f"{before.subject.split('.', 3)[3]} -> {after.subject.split('.', 3)[3]}"
            elapsed = (after.metadata.timestamp - before.metadata.timestamp).total_seconds() * 1000
            gaps.setdefault(step, []).append(elapsed)
    return {step: statistics.median(values) for step, values in gaps.items()}


async def _engine(
    url: str, nats_url: str, episodes: int, concurrency: int, tag: str, pids: list[int], hops: bool,
    stub: StubModel | None,
) -> Measured:
    settings = settings_for(url)
    log = await JetStreamEventLog.connect(nats_url)
    router = stub or ModelRouter()
    svc = services(settings, models=router, tools={"python_code": EchoPython()}, grader=ExactGrader())
    dispatcher = Dispatcher(log, ROUTES, svc, DispatcherSettings(concurrency=256))
    dispatching = asyncio.create_task(dispatcher.run()) if not pids else None
    finished: dict[str, asyncio.Future[None]] = {}

    async def completed(msg) -> None:  # nats callback
        future = finished.get(msg.subject.split(".")[2])
        if future is not None and not future.done():
            future.set_result(None)

    watch = await log.nc.subscribe("apollo.run.*.run.completed", cb=completed)
    gate = asyncio.Semaphore(concurrency)

    async def one(run_id: str) -> None:
        async with gate:
            finished[run_id] = asyncio.get_running_loop().create_future()
            await submit(log, submission(run_id, "What is 6 times 7?", ground_truth="42"))
            await asyncio.wait_for(finished[run_id], 120)

    await asyncio.gather(*(one(f"bench-{tag}-warm-{i}") for i in range(max(warm_up_count(concurrency), 2 * len(pids)))))
    started, cpu, busy = time.perf_counter(), time.process_time() + cpu_seconds(pids), machine_busy_seconds()
    with CollectorClock() as collector:
        await asyncio.gather(*(one(f"bench-{tag}-{i}") for i in range(episodes)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() + cpu_seconds(pids) - cpu
    busy = machine_busy_seconds() - busy
    gaps = await hop_gaps(log, [f"bench-{tag}-{i}" for i in range(episodes)]) if hops else None
    await watch.unsubscribe()
    dispatcher.stop()
    if dispatching is not None:
        await dispatching
    await router.close()
    await log.close()
    return Measured(
        episodes / elapsed, cpu / episodes * 1000, busy / elapsed, gaps,
        collector.total / episodes * 1000, collector.longest * 1000,
    )


SCRIPT = {
    "rules": [
        {"match": "<tool_response>\\{", "reply": "<think>the program printed 42</think><answer>\\boxed{42}</answer>"},
        {"reply": "<think>compute it</think><python_code>print(6*7)</python_code>"},
    ]
}
"""The same replies as :func:`policy`, for the fake server in its own process."""


@contextlib.contextmanager
def model_process(latency: int, jitter: int = 0) -> Iterator[str]:
    """The fake model in its own process, replying as :func:`policy` does."""
    with fake_model_process(SCRIPT, latency, "fake", jitter) as url:
        yield url


@contextlib.asynccontextmanager
async def model_server(latency: int, separate: bool, jitter: int = 0) -> AsyncIterator[str]:
    if separate:
        with model_process(latency, jitter) as url:
            yield url
    else:
        async with FakeOpenAIServer(policy, latency_ms=latency, jitter_ms=jitter) as fake:
            yield fake.base_url


async def main(
    episodes: int,
    latencies: list[int],
    concurrencies: list[int],
    separate: bool,
    variants: list[Variant],
    repeats: int,
    hops: bool = False,
    jitter: int = 0,
) -> None:
    configure_logging(level="error")
    freeze_startup_heap()  # as a worker does, so the loop and the engine run alike
    print(
        f"fake model {'in its own process' if separate else 'inside this process'}; "
        f"{os.cpu_count()} CPU cores; median of {repeats} back-to-back rounds per row"
        + (f"; each model call takes its latency +/- up to {jitter} ms (uniform)" if jitter else ""),
        flush=True,
    )
    with nats_server() as server:
        for latency in latencies:
            async with model_server(latency, separate, jitter) as url:
                for concurrency in concurrencies:
                    count = episodes if concurrency > 1 else max(8, episodes // 8)
                    loops: list[Measured] = []
                    engines: dict[Variant, list[Measured]] = {variant: [] for variant in variants}
                    for round_ in range(repeats):
                        loops.append(await in_process(url, count, concurrency))
                        for variant in variants:
                            tag = f"{latency}-{concurrency}-{variant.workers}-{time.monotonic_ns()}"
                            last = hops and round_ == repeats - 1
                            with heap(variant.heap_frozen):
                                measured = await engine(
                                    url, server.url, count, concurrency, tag, variant.workers, hops=last,
                                    stub=StubModel(latency, jitter) if variant.model_stubbed else None,
                                )
                            engines[variant].append(measured)
                    print(
                        f"latency {latency:>3} ms  concurrency {concurrency:>2}:  loop{' ' * 51}{describe(loops)}",
                        flush=True,
                    )
                    for variant, runs in engines.items():
                        ratios = [run.rate / loop.rate for run, loop in zip(runs, loops, strict=True)]
                        cpu = [run.cpu_ms / loop.cpu_ms for run, loop in zip(runs, loops, strict=True)]
                        line = (
                            f"    engine, {variant.label:<43} {describe(runs)}"
                            f"  ratio {statistics.median(ratios):4.2f}x ({min(ratios):.2f}-{max(ratios):.2f})"
                            f"  CPU/ep {statistics.median(cpu):.1f}x the loop's ({min(cpu):.1f}-{max(cpu):.1f})"
                        )
                        if not variant.workers:
                            line += (
                                f"   GC {median(runs, 'gc_ms'):.2f} ms/ep,"
                                f" longest {max(run.gc_pause_ms for run in runs):.1f} ms"
                            )
                        if latency == 0 and concurrency == 1 and variant == Variant(0):
                            per_episode = 1 / median(runs, "rate") - 1 / median(loops, "rate")
                            line += f"   overhead {per_episode / 2 * 1000:.2f} ms per step"
                        print(line, flush=True)
                        if concurrency > 1:
                            target_rate = TARGET_RATIO * median(loops, "rate")
                            need = cores_needed(runs, target_rate, max(1, variant.workers))
                            print(describe_need(need, target_rate), flush=True)
                        if runs[-1].hops:
                            print(describe_hops(runs[-1].hops), flush=True)
                    if Variant(0) in engines and Variant(0, heap_frozen=False) in engines:
                        pairs = zip(engines[Variant(0)], engines[Variant(0, heap_frozen=False)], strict=True)
                        gains = [frozen.rate / unfrozen.rate for frozen, unfrozen in pairs]
                        print(
                            "    heap frozen / not frozen (dispatcher in this process):"
                            f" {statistics.median(gains):4.2f}x ({min(gains):.2f}-{max(gains):.2f})",
                            flush=True,
                        )
    print(
        f"\ntarget: ratio >= {TARGET_RATIO:.2f}x at 50 ms latency (both concurrencies);"
        f" CPU per episode <= {CPU_TARGET:.0f}x the loop's (issue #33)"
    )


def median(runs: list[Measured], field: str) -> float:
    return statistics.median(getattr(run, field) for run in runs)


def describe_hops(gaps: dict[str, float]) -> str:
    """One line per transition, in the order an episode meets them."""
    lines = [f"        {milliseconds:7.2f} ms  {step}" for step, milliseconds in gaps.items()]
    return "      server-time gaps, median over sampled runs of the last round:\n" + "\n".join(lines)


TARGET_RATIO = 0.9
CPU_TARGET = 2.0
"""Engine CPU per episode over the loop's, at most (issue #33); per round, like the ratio."""
"""The issue's target: the engine at this fraction of the loop's episodes per second."""


class CoresNeeded(NamedTuple):
    """What one engine row's measured costs would take at a given rate of episodes."""

    per_process: float
    """Cores for each dispatching process (the engine's CPU split evenly between them)."""
    machine: float
    """Cores for the whole machine: the engine, nats-server, the model server, the rest."""
    available: int
    """The machine's cores."""

    @property
    def reachable(self) -> bool:
        return self.per_process <= 1.0 and self.machine <= self.available


def cores_needed(runs: list[Measured], rate: float, processes: int) -> CoresNeeded:
    """Scale the row's CPU per episode (its processes, and the machine's) up to ``rate``."""
    machine_ms_per_episode = median(runs, "busy_cores") / median(runs, "rate") * 1000
    return CoresNeeded(
        per_process=median(runs, "cpu_ms") * rate / 1000 / processes,
        machine=machine_ms_per_episode * rate / 1000,
        available=os.cpu_count() or 1,
    )


def describe_need(need: CoresNeeded, rate: float) -> str:
    verdict = "within reach here" if need.reachable else "out of reach on this machine"
    return (
        f"      at {TARGET_RATIO}x the loop ({rate:.0f} ep/s) this row's CPU per episode would need"
        f" {need.per_process:.2f} cores per dispatching process (1 at most) and {need.machine:.2f} machine-wide"
        f" ({need.available} here): {verdict}"
    )


def describe(runs: list[Measured]) -> str:
    return (
        f"{median(runs, 'rate'):6.1f} ep/s ({median(runs, 'cpu_ms'):4.1f} ms CPU/ep,"
        f" machine {median(runs, 'busy_cores'):3.1f} cores busy)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--episodes",
        type=whole_number(1),
        default=320,
        help="timed episodes per round above concurrency 1 (an eighth, at least 8, at concurrency 1)",
    )
    parser.add_argument("--quick", action="store_true", help="fewer episodes and one round")
    parser.add_argument(
        "--repeats", type=whole_number(1), default=3, help="back-to-back rounds per row (median reported)"
    )
    parser.add_argument("--latencies", type=whole_number(0), nargs="+", default=[0, 50], help="model latencies in ms")
    parser.add_argument(
        "--concurrencies", type=whole_number(1), nargs="+", default=[1, 32], help="episodes in flight per row"
    )
    parser.add_argument(
        "--workers",
        type=whole_number(0),
        nargs="+",
        default=[0, os.cpu_count() or 1],
        help="engine variants: 0 = dispatch in the benchmark's process, N = N worker processes",
    )
    parser.add_argument(
        "--same-process-model",
        action="store_true",
        help="serve the fake model inside the benchmark's process (its CPU then competes)",
    )
    parser.add_argument(
        "--hops", action="store_true", help="after each engine row, the median gap between consecutive events"
    )
    parser.add_argument(
        "--unfrozen-heap",
        action="store_true",
        help="add a row: the in-process engine with its start-up heap left to the garbage collector",
    )
    parser.add_argument(
        "--stub-model",
        action="store_true",
        help="add a row: the in-process engine calling a stub model inside its own process (no HTTP)",
    )
    parser.add_argument(
        "--jitter-ms",
        type=whole_number(0),
        default=0,
        help="each model call waits its latency +/- up to this many ms, drawn uniformly (default: fixed)",
    )
    parser.add_argument("--serve-worker", nargs=2, metavar=("MODEL_URL", "NATS_URL"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve_worker:
        asyncio.run(serve_worker(*args.serve_worker))
    else:
        asyncio.run(
            main(
                64 if args.quick else args.episodes,
                args.latencies,
                args.concurrencies,
                not args.same_process_model,
                [Variant(workers) for workers in args.workers]
                + ([Variant(0, heap_frozen=False)] if args.unfrozen_heap else [])
                + ([Variant(0, model_stubbed=True)] if args.stub_model else []),
                1 if args.quick else args.repeats,
                args.hops,
                args.jitter_ms,
            )
        )
