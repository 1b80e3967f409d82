"""Rebuild rate of projections against a raw ordered-consumer read of the same stream.

For logs of 1k, 10k and 100k events (synthetic but shaped like real episodes: a
submission, settings, then model call / reply / action / tool call / tool result per
step, grading and the sealed trajectory), measure in the same run:

* baseline: a nats-py ordered push consumer with a callback receiving every message
  (no decoding), the fastest way to read a stream;
* rebuild: ``replay.rebuild.rebuild_stream`` over ``JetStreamEventLog.read_all`` (ordered
  consumer, decoded events): every registered projection of every run in one pass, with
  the cyclic GC paused as in the projector's catch-up.

Each is timed after one untimed warm-up pass of each. The timed passes alternate, a raw
read then a rebuild, so each pair shares the machine's speed of the moment (it drifts by
tens of percent within a minute on a shared host); the ratio printed is the median of the
pairs' ratios, with their range (5 pairs up to 10k events, 3 at 100k), and the events/s are
the medians of each side. Target: ratio rebuild/baseline >= 0.6 (issue #33; it was 0.5).

    python bench/replay.py [--quick]     # --quick: 1k and 10k only
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

# Run as a script, this file's folder heads sys.path and its name would hide the replay package.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

# ruff: noqa: E402 (imports follow the sys.path fix)
from engine.nats.jetstream import JetStreamEventLog
from engine.nats.server import NatsServerProcess
from events import (
    ActionParsed,
    AnswerGraded,
    ChatMessage,
    Event,
    ModelCallRequested,
    ModelResponded,
    ProblemSubmitted,
    RunStarted,
    ToolCallRequested,
    ToolReturned,
)
from events.codec import encode
from events.subjects import ALL_RUNS, subject_for
from replay.rebuild import rebuild_stream

STEPS = 4
PROMPT = "Solve the problem step by step, using python when it helps. " * 12


def episode(run: int) -> list[Event]:
    """One run: about 5 events per step, prompts of ~1 KB, like a reason episode."""
    run_id, now = f"bench-{run}", datetime.now(UTC)
    common = {"run_id": run_id, "occurred_at": now, "correlation_id": run_id}
    out: list[Event] = [
        ProblemSubmitted(event_id=run_id, problem_id=f"p{run}", question="What is 6 times 7?",
                         ground_truth="42", **common),
        RunStarted(event_id=f"{run_id}-rs", workflow="reason", causation_id=run_id,
                   settings={"episode": {"max_steps": STEPS}, "models": {"policy": {"model": "m"}}}, **common),
    ]
    for step in range(1, STEPS + 1):
        call = f"{run_id}-c{step}"
        prompt = [ChatMessage(role="user", content=f"{PROMPT} step {step}")]
        out += [
            ModelCallRequested(event_id=f"{call}-q", call_id=call, role="policy", step=step, messages=prompt,
                               model="m", **common),
            ModelResponded(event_id=f"{call}-r", call_id=call, role="policy", step=step, model="m",
                           text=f"<think>{'x' * 300}</think><python_code>print({step})</python_code>", **common),
            ActionParsed(event_id=f"{call}-a", call_id=call, role="policy", step=step, kind="tool",
                         action="<python_code>...</python_code>", valid=True, tool="python_code",
                         tool_input=f"print({step})", **common),
            ToolCallRequested(event_id=f"{call}-t", call_id=f"{call}-tool", role="policy", step=step,
                              tool="python_code", input=f"print({step})", **common),
            ToolReturned(event_id=f"{call}-o", call_id=f"{call}-tool", role="policy", step=step,
                         tool="python_code", result=json.dumps({"result": f"{step}\n"}), score=1.0, **common),
        ]
    out.append(AnswerGraded(event_id=f"{run_id}-g", step=STEPS, answer="42", score=1.0, method="bench", **common))
    return out


TARGET = 0.6
"""Rebuild events/s over the raw read's, at least (issue #33)."""


async def fill(log: JetStreamEventLog, total: int) -> int:
    """Append about ``total`` events with publish_async, acknowledged in windows."""
    count, run = 0, 0
    while count < total:
        for event in episode(run):
            await log.js.publish_async(subject_for(event), encode(event), headers={"Nats-Msg-Id": event.event_id})
            count += 1
        run += 1
        if run % 200 == 0:
            await log.js.publish_async_completed()
    await log.js.publish_async_completed()
    return count


async def raw_read(log: JetStreamEventLog, total: int) -> float:
    done, seen = asyncio.Event(), [0]

    async def on_msg(msg: object) -> None:
        seen[0] += 1
        if seen[0] >= total:
            done.set()

    started = time.perf_counter()
    sub = await log.js.subscribe(ALL_RUNS, cb=on_msg, ordered_consumer=True)
    await done.wait()
    elapsed = time.perf_counter() - started
    await sub.unsubscribe()
    return elapsed


async def rebuild(log: JetStreamEventLog, total: int, *, count: bool = False) -> float:
    """Time ``rebuild_stream(log.read_all())`` as ``apollo replay`` runs it. With ``count``
    (the untimed pass) each record also goes through a counting generator, which checks
    that every event was read but would charge the rebuild a generator step per event."""
    counted = [0]

    async def counting():
        async for record in log.read_all(ALL_RUNS):
            counted[0] += 1
            yield record

    started = time.perf_counter()
    states = await rebuild_stream(counting() if count else log.read_all(ALL_RUNS))
    elapsed = time.perf_counter() - started
    if count:
        assert counted[0] == total, (counted[0], total)
    assert len(states) == len({f"bench-{run}" for run in range(len(states))})
    return elapsed


async def measure(size: int) -> None:
    with tempfile.TemporaryDirectory() as store, NatsServerProcess(store_dir=Path(store)) as server:
        log = await JetStreamEventLog.connect(server.url)
        try:
            total = await fill(log, size)
            # One untimed pass of each first: one-time costs (imports, decoder set-up,
            # the server's first reads from disk) are not per-event rates.
            await raw_read(log, total)
            await rebuild(log, total, count=True)
            pairs = [(await raw_read(log, total), await rebuild(log, total))
                     for _ in range(5 if size <= 10_000 else 3)]
        finally:
            await log.close()
    raw = total / statistics.median(t_raw for t_raw, _ in pairs)
    rebuilt = total / statistics.median(t_rebuild for _, t_rebuild in pairs)
    ratios = [t_raw / t_rebuild for t_raw, t_rebuild in pairs]
    ratio = statistics.median(ratios)
    verdict = "ok" if ratio >= TARGET else "BELOW TARGET"
    print(f"{total:>7} events: raw ordered read {raw:>9,.0f} ev/s | rebuild {rebuilt:>9,.0f} ev/s | "
          f"ratio {ratio:.2f} ({min(ratios):.2f}-{max(ratios):.2f}; target >= {TARGET}: {verdict})", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1k and 10k events only")
    args = parser.parse_args()
    for size in (1_000, 10_000) if args.quick else (1_000, 10_000, 100_000):
        asyncio.run(measure(size))


if __name__ == "__main__":
    main()
