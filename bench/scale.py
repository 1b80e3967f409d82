"""Horizontal scale-out: episodes per second with 1, 2 and 4 worker processes.

Every worker holds the same number of events in flight (``--concurrency``, which
approximates episodes in flight since an episode is a chain of events); the model is
the fake OpenAI server in its own process at 50 ms per call. Printed as ratios to
one worker measured in the same run (targets: >= 1.8x with 2, >= 3x with 4 workers;
a machine with fewer cores than workers cannot reach them). Each line also says how busy
the machine's CPUs were: near 100% means the figure is bounded by cores, not by the
model's latency. Every worker count first runs untimed warm-up episodes.

    .venv/bin/python bench/scale.py [--workers 1 2 4] [--episodes 60] [--concurrency 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._common import fake_model_process  # noqa: E402
from engine.app.operations import submission, submit  # noqa: E402
from engine.nats.jetstream import JetStreamEventLog  # noqa: E402
from engine.nats.server import NatsServerProcess  # noqa: E402

REPLY = "<answer>\\boxed{4}</answer>"


def spawn_workers(
    count: int, nats_url: str, model_url: str, concurrency: int, folder: Path
) -> list[subprocess.Popen[bytes]]:
    env = {
        **os.environ,
        "APOLLO_MODEL_URL": model_url,
        "APOLLO_MODEL": "fake-model",
        "APOLLO_DATA_DIR": str(folder / "data"),
        "APOLLO_LOG_LEVEL": "warning",
    }
    return [
        subprocess.Popen(  # our own module
            [sys.executable, "-m", "engine", "--nats-url", nats_url, "worker", "--concurrency", str(concurrency)],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for _ in range(count)
    ]


async def wait_pulling(log: JetStreamEventLog, count: int) -> None:
    for _ in range(600):
        info = await log.js.consumer_info(log.stream, "apollo-workers")
        if info.num_waiting >= count:
            return
        await asyncio.sleep(0.1)
    raise SystemExit(f"{count} workers did not start pulling")


def cpu_times() -> tuple[int, int]:
    """(busy, total) jiffies of the whole machine, from /proc/stat (0, 0 where there is none)."""
    try:
        fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    except (OSError, ValueError):
        return 0, 0
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields) - idle, sum(fields)


def busy_fraction(before: tuple[int, int], after: tuple[int, int]) -> float | None:
    total = after[1] - before[1]
    return (after[0] - before[0]) / total if total > 0 else None


async def measure(
    workers: int, episodes: int, concurrency: int, model_url: str, folder: Path
) -> tuple[float, float | None]:
    """Episodes per second for one worker count on a fresh server, and how busy the CPUs were."""
    server = NatsServerProcess(store_dir=folder / f"nats-{workers}").start()
    log = await JetStreamEventLog.connect(server.url)
    procs = spawn_workers(workers, server.url, model_url, concurrency, folder / f"w{workers}")
    try:
        await wait_pulling(log, workers)
        # Untimed first: every worker's model connections and grading processes start up.
        await run_episodes(log, [f"warm-{workers}-{i}" for i in range(workers * concurrency)])
        busy_before, started = cpu_times(), time.perf_counter()
        await run_episodes(log, [f"scale-{workers}-{i}" for i in range(episodes)])
        rate = episodes / (time.perf_counter() - started)
        return rate, busy_fraction(busy_before, cpu_times())
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(20)
        await log.close()
        server.stop()


async def run_episodes(log: JetStreamEventLog, run_ids: list[str]) -> None:
    """Submit every run, then wait until each has completed or failed."""
    ended: set[str] = set()
    everything_ended = asyncio.Event()

    async def on_end(msg) -> None:  # nats callback
        if not msg.subject.endswith((".run.completed", ".run.failed")):
            return
        ended.add(msg.subject.split(".")[2])
        if ended.issuperset(run_ids):
            everything_ended.set()

    watch = await log.nc.subscribe("apollo.run.*.run.*", cb=on_end)
    try:
        for run_id in run_ids:
            await submit(log, submission(run_id, "What is 2 + 2?", ground_truth="4"))
        await asyncio.wait_for(everything_ended.wait(), 600)
    finally:
        await watch.unsubscribe()


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--episodes", type=int, default=60, help="episodes per worker process")
    parser.add_argument("--concurrency", type=int, default=4, help="events in flight per worker")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    args = parser.parse_args()
    model_script = {"rules": [{"reply": REPLY}]}
    with (
        tempfile.TemporaryDirectory(prefix="apollo-scale-") as tmp,
        fake_model_process(model_script, args.latency_ms, "fake-model") as model_url,
    ):
        folder = Path(tmp)
        rates = {}
        for count in args.workers:
            rates[count], busy = await measure(count, args.episodes * count, args.concurrency, model_url, folder)
            load = f"   machine CPU {busy:.0%} busy" if busy is not None else ""
            print(f"{count} worker(s): {rates[count]:6.1f} episodes/s{load}", flush=True)
    base = rates[args.workers[0]]
    print(
        f"\ncpu cores: {os.cpu_count()}; concurrency {args.concurrency} per worker; "
        f"model latency {args.latency_ms:g} ms"
    )
    for count, rate in rates.items():
        print(f"{count} worker(s): {rate / base:4.2f}x of {args.workers[0]} worker(s)")


if __name__ == "__main__":
    asyncio.run(main())
