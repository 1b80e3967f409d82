"""Atomic batch appends against one acknowledged publish per event, on the pinned nats-server.

A worker could record what one delivery leads to (an effect's result and the decisions
below it, 2-4 events) as one atomic batch (nats-server 2.12, ``allow_atomic``): one
acknowledgement instead of one per event. This measures whether that pays, in the same run:

* baseline: each event published with ``Nats-Msg-Id`` and awaited, as ``EventStore.append``
  does (the engine's own ``StreamPublisher``);
* batches: the same events in atomic batches of ``--size``, each event with its
  ``Nats-Msg-Id``, only the commit acknowledged.

Both write to a stream configured as apollo's (file storage, s2, a deduplication window,
direct gets, atomic batches allowed) from ``--concurrency`` tasks, and each side runs
twice, alternating. Printed per side: wall time, the client's CPU and nats-server's CPU,
each per event, and the batch/baseline ratios. On 2026-11-29 (2.12.8, this 2-core host) the
client saved about a sixth of its CPU per event while the server spent over ten times as
much, so batches halved the engine's episode rate (docs/workers.md, "Atomic batch appends,
built and measured").

    .venv/bin/python bench/atomic_batches.py [--events 1800] [--size 3] [--concurrency 32]
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import nats
from nats.js import api

from bench._common import nats_server
from engine.nats.publisher import StreamPublisher

BODY = b"e" * 600
"""About the size of a typical event body."""


def process_cpu_s(pid: int) -> float | None:
    """User + system CPU seconds of another process (Linux's /proc), or None elsewhere."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


async def write(url: str, mode: str, events: int, size: int, concurrency: int, round_no: int) -> tuple[float, float]:
    """Write ``events`` events; (wall seconds, client CPU seconds)."""
    nc = await nats.connect(url)
    publisher = StreamPublisher(nc)
    batch_ids = itertools.count(1)
    groups = events // size // concurrency

    async def writer(task: int) -> None:
        for group in range(groups):
            run = f"r{round_no}x{task}x{group}"
            subjects = [(f"apollo.run.{run}.e{index}", f"{run}-{index}") for index in range(size)]
            if mode == "single":
                for subject, msg_id in subjects:
                    await publisher.publish(subject, BODY, {"Nats-Msg-Id": msg_id})
                continue
            batch = f"{mode}-{round_no}-{next(batch_ids)}"
            for index, (subject, msg_id) in enumerate(subjects, 1):
                headers = {"Nats-Msg-Id": msg_id, "Nats-Batch-Id": batch, "Nats-Batch-Sequence": str(index)}
                if index < size:
                    await nc.publish(subject, BODY, headers=headers)
                else:
                    await publisher.publish(subject, BODY, {**headers, "Nats-Batch-Commit": "1"})

    started_cpu, started = time.process_time(), time.perf_counter()
    await asyncio.gather(*(writer(task) for task in range(concurrency)))
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    await publisher.close()
    await nc.close()
    return wall, cpu


async def measure(events: int, size: int, concurrency: int) -> None:
    with nats_server() as server:
        nc = await nats.connect(server.url)
        await nc.jetstream().add_stream(api.StreamConfig(
            name="BENCH", subjects=["apollo.>"], storage=api.StorageType.FILE, duplicate_window=600,
            allow_direct=True, allow_atomic=True, compression=api.StoreCompression.S2,
        ))
        await nc.close()
        pid = server.process.pid if server.process else 0
        written = events // size // concurrency * size * concurrency
        results: dict[str, list[tuple[float, float, float | None]]] = {"single": [], "batch": []}
        await write(server.url, "single", size * concurrency, size, concurrency, 0)  # warm-up
        for round_no, mode in enumerate(("single", "batch", "single", "batch"), 1):
            before = process_cpu_s(pid)
            wall, cpu = await write(server.url, mode, events, size, concurrency, round_no)
            after = process_cpu_s(pid)
            server_cpu = after - before if before is not None and after is not None else None
            results[mode].append((wall, cpu, server_cpu))
    print(f"{written} events per side and round, batches of {size}, {concurrency} writers, 2 rounds alternating")
    per_event: dict[str, tuple[float, float, float | None]] = {}
    for mode, rounds in results.items():
        wall = statistics.median(r[0] for r in rounds) / written * 1e6
        cpu = statistics.median(r[1] for r in rounds) / written * 1e6
        server = [r[2] for r in rounds if r[2] is not None]
        server_us = statistics.median(server) / written * 1e6 if server else None
        per_event[mode] = (wall, cpu, server_us)
        shown = f"{server_us:7.1f} us" if server_us is not None else "    n/a"
        label = "one acknowledged publish per event" if mode == "single" else f"atomic batches of {size}"
        print(f"  {label:36s} wall {wall:7.1f} us/event | client CPU {cpu:6.1f} us | nats-server CPU {shown}")
    single, batch = per_event["single"], per_event["batch"]
    if batch[2] is None or single[2] is None:
        server_ratio = "n/a (no /proc here)"
    else:
        server_ratio = f"{batch[2] / single[2]:.2f}x" if single[2] else "n/a (too short to measure)"
    print(f"batches / single: wall {batch[0] / single[0]:.2f}x, client CPU {batch[1] / single[1]:.2f}x, "
          f"nats-server CPU {server_ratio}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1800, help="events per side and round")
    parser.add_argument("--size", type=int, default=3, help="events per batch (2 or more)")
    parser.add_argument("--concurrency", type=int, default=32, help="concurrent writers")
    args = parser.parse_args()
    if args.size < 2 or args.concurrency < 1 or args.events < args.size * args.concurrency:
        parser.error("--size must be 2 or more, --concurrency 1 or more, --events at least size x concurrency")
    asyncio.run(measure(args.events, args.size, args.concurrency))


if __name__ == "__main__":
    main()
