"""Samples/s from the rollout subscription to DataProto, against a raw read in the same run.

Baseline: fetch + ack every trajectory from the source and build the same samples and
DataProto in fixed chunks, with no grouping, heartbeats or cursor. Measured: the same
events through ``RolloutSubscription`` (group assembly, exactly-once cursor, commit).
The ratio is measured/baseline; the target is >= 0.5. Token ids are recorded in the
events, as a vLLM-backed engine records them, so no tokenizer runs.

    python bench/collector.py [--groups 200] [--group-size 8] [--turns 3] [--nats]

``--nats`` runs the same comparison over a real JetStream consumer (embedded server).
"""

from __future__ import annotations

import argparse
import asyncio
import random
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

# The repository root first: run as a script, this folder would come first, and its
# bench/replay.py would stand in for the replay package.
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from events import ChatMessage, TrajectorySealed, Turn
from replay.training import InMemoryRolloutSource, RolloutSubscription, SubscriptionOptions
from replay.training.dataproto import collate
from replay.training.samples import build_many
from replay.training.tokens import tokenize_sample


def make_events(groups: int, group_size: int, turns: int, seed: int = 0) -> list[TrajectorySealed]:
    """Interleaved groups (as parallel workers seal them) with recorded token ids."""
    rng = random.Random(seed)
    out = []
    for g in range(groups):
        for i in range(group_size):
            ts = [
                Turn(
                    step=s,
                    prompt=[ChatMessage(role="user", content="q" * 50)],
                    response="a" * 50,
                    prompt_token_ids=[rng.randrange(1000) for _ in range(rng.randint(100, 300))],
                    response_token_ids=[rng.randrange(1000) for _ in range(rng.randint(50, 200))],
                    valid=rng.random() > 0.1,
                )
                for s in range(1, turns + 1)
            ]
            out.append(
                TrajectorySealed(
                    event_id=f"t-{g}-{i}",
                    run_id=f"r-{g}-{i}",
                    occurred_at=datetime.now(UTC),
                    problem_id=f"p-{g}",
                    group_id=f"g-{g}",
                    sample_index=i,
                    data_source="bench",
                    turns=ts,
                    reward=float(rng.random() > 0.5),
                    score=1.0,
                    done_reason="answer",
                    invalid_turns=0,
                    model="bench",
                )
            )
    rng.shuffle(out)
    return out


def to_dataproto(trajs: list[TrajectorySealed]) -> int:
    samples = build_many(trajs, "per_turn").samples
    collate([tokenize_sample(s, None) for s in samples])
    return len(samples)


async def raw_read(source: Any, chunk: int) -> int:
    n, buffer = 0, []
    while True:
        deliveries = await source.fetch(chunk, 0.05)
        if not deliveries:
            break
        for d in deliveries:
            await d.ack()
            buffer.append(d.event)
        while len(buffer) >= chunk:
            n += to_dataproto(buffer[:chunk])
            buffer = buffer[chunk:]
    return n + (to_dataproto(buffer) if buffer else 0)


async def subscribed(source: Any, group_size: int, groups_per_batch: int) -> int:
    opts = SubscriptionOptions(
        group_size=group_size,
        groups_per_batch=groups_per_batch,
        fetch_size=groups_per_batch * group_size,
        fetch_timeout=0.05,
        idle_timeout=0.0,
        heartbeat_interval=0,
    )
    n = 0
    async for batch in RolloutSubscription(source, opts):
        n += to_dataproto(batch.trajectories)
        await batch.commit()
    return n


async def timed(coro: Any) -> tuple[int, float]:
    t0 = time.perf_counter()
    n = await coro
    return n, time.perf_counter() - t0


async def bench_memory(
    events: list[TrajectorySealed], group_size: int, gpb: int
) -> tuple[float, float]:
    chunk = group_size * gpb
    n_raw, t_raw = await timed(raw_read(InMemoryRolloutSource(events), chunk))
    n_sub, t_sub = await timed(subscribed(InMemoryRolloutSource(events), group_size, gpb))
    assert n_raw == n_sub, (n_raw, n_sub)
    return n_raw / t_raw, n_sub / t_sub


async def bench_nats(
    events: list[TrajectorySealed], group_size: int, gpb: int
) -> tuple[float, float]:
    from engine.nats.jetstream import JetStreamEventLog
    from engine.nats.rollout_source import JetStreamRolloutSource
    from engine.nats.server import NatsServerProcess

    with tempfile.TemporaryDirectory() as tmp:
        server = NatsServerProcess(store_dir=Path(tmp)).start()
        try:
            log = await JetStreamEventLog.connect(server.url)
            for e in events:
                await log.append(e)
            chunk = group_size * gpb
            raw = await JetStreamRolloutSource.create(log.js, durable="bench-raw")
            n_raw, t_raw = await timed(raw_read(raw, chunk))
            sub = await JetStreamRolloutSource.create(log.js, durable="bench-sub")
            n_sub, t_sub = await timed(subscribed(sub, group_size, gpb))
            await log.close()
        finally:
            server.stop()
    assert n_raw == n_sub, (n_raw, n_sub)
    return n_raw / t_raw, n_sub / t_sub


def main() -> None:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--groups", type=int, default=200)
    p.add_argument("--group-size", type=int, default=8)
    p.add_argument("--groups-per-batch", type=int, default=4)
    p.add_argument("--turns", type=int, default=3)
    p.add_argument("--nats", action="store_true", help="also run over a real JetStream consumer")
    args = p.parse_args()
    events = make_events(args.groups, args.group_size, args.turns)
    to_dataproto(events[: args.group_size])  # warm-up: imports verl/torch outside the timings
    runs = [("in-memory", bench_memory)] + ([("jetstream", bench_nats)] if args.nats else [])
    for name, fn in runs:
        raw, sub = asyncio.run(fn(events, args.group_size, args.groups_per_batch))
        verdict = "ok" if sub / raw >= 0.5 else "BELOW TARGET"
        print(
            f"{name:10s} raw read -> DataProto {raw:9.0f} samples/s | subscription -> DataProto "
            f"{sub:9.0f} samples/s | ratio {sub / raw:.2f}x (target >= 0.5x: {verdict})"
        )


if __name__ == "__main__":
    main()
