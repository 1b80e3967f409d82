"""Bus benchmark: the engine's append path and a handler round trip vs raw nats-py publishes.

Prints p50/p99 latency and events/s for:
  raw      sequential acked publishes with plain nats-py (the baseline)
  append   JetStreamEventLog.append (encode + Nats-Msg-Id + acked publish)
  handler  submit a problem (as ``apollo submit`` does: appended on the condition that its run
           is new, so the worker starts the run without reading it) -> dispatcher -> handler ->
           output recorded and seen
  h+read   the same with a plain append of the submission: the worker reads the run first
           (what an event in the middle of a run costs when no worker decided it ahead)
and the ratios engine/raw. Targets: append p50 <= 1.5x raw; handler round trip p50 <= 4x raw.
Then 32 concurrent publishers: events/s and this process's CPU per publish for nats-py's
``js.publish`` (the baseline) and for ``append`` (acknowledgements on one shared inbox).
Last, the cost of access control: append and handler round trip against deploy/nats/single.conf
(TLS, worker and viewer role users) vs a plaintext server without users, in the same run
(target <= 1.3x).

    .venv/bin/python bench/bus.py [--n 2000]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import nats
from nats.js import api

from bench._common import nats_server, summary_ms
from engine.app.log_setup import configure_logging
from engine.app.operations import submit
from engine.nats.jetstream import JetStreamEventLog
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.testing.event_builders import submitted
from engine.testing.secured_nats import secured_server
from events import ProblemSubmitted, RunStarted, encode
from handlers.context import Services
from handlers.routes import Route


async def start(event: ProblemSubmitted, ctx):  # benchmark route
    return [ctx.new(RunStarted, "started", workflow="reason")]


async def raw_publishes(url: str, n: int, prefix: str) -> list[float]:
    # Bodies encoded before timing, each naming its subject's run, so the handler phase's
    # dispatcher later reads well-formed submissions instead of rejecting every one.
    bodies = [encode(submitted(f"{prefix}-{i}")) for i in range(n)]
    nc = await nats.connect(url)
    js = nc.jetstream()
    samples = []
    for i, body in enumerate(bodies):
        t0 = time.perf_counter()
        await js.publish(f"apollo.run.{prefix}-{i}.problem.submitted", body, headers={"Nats-Msg-Id": f"{prefix}-{i}"})
        samples.append(time.perf_counter() - t0)
    await nc.close()
    return samples


async def engine_appends(log: JetStreamEventLog, n: int) -> list[float]:
    events = [submitted(f"app-{i}") for i in range(n)]
    samples = []
    for event in events:
        t0 = time.perf_counter()
        await log.append(event)
        samples.append(time.perf_counter() - t0)
    return samples


async def handler_round_trips(log: JetStreamEventLog, url: str, n: int, *, as_submitted: bool = True) -> list[float]:
    """Time from appending a submission to seeing its handler's output on the bus (with
    ``as_submitted=False`` the submission is a plain append, so the worker reads the run first)."""
    watcher = await nats.connect(url)
    waiting: dict[str, asyncio.Future[float]] = {}

    async def seen(msg) -> None:  # nats callback
        run_id = msg.subject.split(".")[2]
        future = waiting.get(run_id)
        if future is not None and not future.done():
            future.set_result(time.perf_counter())

    await watcher.subscribe("apollo.run.*.run.started", cb=seen)
    try:
        return await _timed_round_trips(log, waiting, n, "rt", as_submitted=as_submitted)
    finally:
        await watcher.close()


async def _timed_round_trips(
    log: JetStreamEventLog, waiting: dict[str, asyncio.Future[float]], n: int, prefix: str, *,
    as_submitted: bool = True,
) -> list[float]:
    """Run a one-route dispatcher and time ``n`` submissions until a watcher resolves ``waiting``.

    ``as_submitted``: each is appended as ``apollo submit`` does, on the condition that its
    run is new, which tells the worker the submission is the whole history. Otherwise a plain
    append: the worker cannot know that and reads the run before handling it (as for an
    event in the middle of a run that reaches a worker without its history cached).
    """
    dispatcher = Dispatcher(log, [Route(ProblemSubmitted, start, "decide", "start")], Services(),
                            DispatcherSettings(pull_timeout=5.0))
    task = asyncio.create_task(dispatcher.run())
    await asyncio.sleep(0.3)
    samples = []
    try:
        # The earlier phases left their submissions in the work queue: time nothing until the
        # dispatcher has worked through them (a sentinel's output shows it has).
        sentinel = f"{prefix}-drained-{uuid.uuid4().hex[:8]}"
        waiting[sentinel] = asyncio.get_running_loop().create_future()
        await log.append(submitted(sentinel))
        await asyncio.wait_for(waiting[sentinel], 120)
        for i in range(n):
            run_id = f"{prefix}-{uuid.uuid4().hex[:8]}-{i}"
            waiting[run_id] = asyncio.get_running_loop().create_future()
            t0 = time.perf_counter()
            await (submit(log, submitted(run_id)) if as_submitted else log.append(submitted(run_id)))
            samples.append(await asyncio.wait_for(waiting[run_id], 10) - t0)
    finally:
        dispatcher.stop()
        await task
    return samples


async def concurrent(publish, n: int, writers: int = 32) -> tuple[float, float]:
    """Events/s and CPU microseconds per publish with ``writers`` publishing at once."""
    async def writer(index: int) -> None:
        for i in range(n // writers):
            await publish(index, i)

    started, cpu = time.perf_counter(), time.process_time()
    await asyncio.gather(*(writer(index) for index in range(writers)))
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    total = n // writers * writers
    return total / elapsed, cpu / total * 1e6


async def compare_concurrent(log: JetStreamEventLog, n: int, writers: int = 32) -> None:
    tag = uuid.uuid4().hex[:6]
    bodies = [encode(submitted(f"cr-{tag}-{index}")) for index in range(writers)]  # encoded before timing

    async def raw(index: int, i: int) -> None:
        await log.js.publish(f"apollo.run.cr-{tag}-{index}.problem.submitted", bodies[index],
                             headers={"Nats-Msg-Id": f"cr-{tag}-{index}-{i}"})

    async def append(index: int, i: int) -> None:
        await log.append(submitted(f"ca-{tag}-{index}", event_id=f"ca-{tag}-{index}-{i}"))

    await concurrent(raw, 640)  # warm-up, both paths
    await concurrent(append, 640)
    raw_rate, raw_cpu = await concurrent(raw, n)
    append_rate, append_cpu = await concurrent(append, n)
    print(f"32 at once: js.publish {raw_rate:7.0f} events/s ({raw_cpu:5.0f} us CPU each)"
          f"   append {append_rate:7.0f} events/s ({append_cpu:5.0f} us CPU each, encoding included)")
    print(f"append / js.publish  CPU per publish {append_cpu / raw_cpu:.2f}x   events/s {append_rate / raw_rate:.2f}x")


async def handler_round_trips_seen_by(log: JetStreamEventLog, watcher: JetStreamEventLog, n: int) -> list[float]:
    """As :func:`handler_round_trips`, the output seen through a JetStream consumer (what a
    viewer role may read; it may not subscribe to run subjects directly)."""
    waiting: dict[str, asyncio.Future[float]] = {}

    async def seen(msg) -> None:  # nats callback
        future = waiting.get(msg.subject.split(".")[2])
        if future is not None and not future.done():
            future.set_result(time.perf_counter())

    sub = await watcher.js.subscribe("apollo.run.*.run.started", cb=seen, ordered_consumer=True,
                                     config=api.ConsumerConfig(deliver_policy=api.DeliverPolicy.NEW),
                                     stream=watcher.stream)
    try:
        return await _timed_round_trips(log, waiting, n, "rs")
    finally:
        await sub.unsubscribe()


class _Side:
    """One server's connections for the access-control rows: the worker's log and a viewer."""

    def __init__(self, log: JetStreamEventLog, watcher: JetStreamEventLog) -> None:
        self.log, self.watcher = log, watcher
        self.append: list[float] = []
        self.handler: list[float] = []

    @classmethod
    async def open(cls, url: str, worker, viewer) -> _Side:  # ClientSecurity or None
        log = await JetStreamEventLog.connect(url, security=worker, manage_streams=worker is None)
        return cls(log, await JetStreamEventLog.connect(url, security=viewer, manage_streams=False))

    async def close(self) -> None:
        await self.watcher.close()
        await self.log.close()


async def compare_access_control(n: int, rounds: int = 4) -> None:
    """Both servers up at once, measured in alternating rounds so drift on a shared host hits both."""
    print("== access control: TLS + role credentials (deploy/nats/single.conf) vs plaintext without users;"
          " both fsync before ack, as single.conf does")
    with nats_server(fsync_always=True) as plain, tempfile.TemporaryDirectory() as folder, \
            secured_server(Path(folder)) as secured:
        admin = await JetStreamEventLog.connect(secured.url, security=secured.role("admin"))  # streams ensure
        await admin.close()
        sides = {"plaintext": await _Side.open(plain.url, None, None),
                 "TLS + credentials": await _Side.open(secured.url, secured.role("worker"), secured.role("viewer"))}
        try:
            for side in sides.values():
                await engine_appends(side.log, 200)  # warm-up
            for _ in range(rounds):
                for side in sides.values():
                    side.append += await engine_appends(side.log, n // rounds)
                    side.handler += await handler_round_trips_seen_by(side.log, side.watcher, max(50, n // 4 // rounds))
        finally:
            for side in sides.values():
                await side.close()
    stats = {}
    for name, side in sides.items():
        print(name)
        stats[name] = (line("append", side.append), line("handler", side.handler))
    (plain_append, plain_handler), (append, handler) = stats.values()
    print(f"append  TLS / plaintext  p50 {append['p50'] / plain_append['p50']:.2f}x  (target <= 1.3x)")
    print(f"handler TLS / plaintext  p50 {handler['p50'] / plain_handler['p50']:.2f}x  (target <= 1.3x)")


def line(name: str, samples: list[float]) -> dict[str, float]:
    stats = summary_ms(samples)
    rate = len(samples) / sum(samples)
    print(f"{name:<8} p50 {stats['p50']:7.3f} ms   p99 {stats['p99']:7.3f} ms   {rate:9.0f} events/s")
    return stats


async def main(n: int) -> None:
    configure_logging(level="warning")
    for durable in (False, True):
        label = "fsync before every ack (production durability)" if durable else "default server (OS-buffered writes)"
        print(f"== {label}")
        with nats_server(fsync_always=durable) as server:
            log = await JetStreamEventLog.connect(server.url)
            await raw_publishes(server.url, 200, "warm")  # warm-up
            raw = line("raw", await raw_publishes(server.url, n, "raw"))
            append = line("append", await engine_appends(log, n))
            handler = line("handler", await handler_round_trips(log, server.url, max(200, n // 4)))
            reading = line("h+read", await handler_round_trips(log, server.url, max(200, n // 4), as_submitted=False))
            print(f"append  / raw  p50 {append['p50'] / raw['p50']:.2f}x  (target <= 1.5x)")
            print(f"handler / raw  p50 {handler['p50'] / raw['p50']:.2f}x  (target <= 4x)")
            print(f"handler / raw  p99 {handler['p99'] / raw['p99']:.2f}x")
            print(f"h+read  / raw  p50 {reading['p50'] / raw['p50']:.2f}x  (plain append: the worker reads the run)")
            await compare_concurrent(log, 4 * n)
            await log.close()
        print()
    await compare_access_control(n)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2000, help="publishes per measurement")
    asyncio.run(main(parser.parse_args().n))
