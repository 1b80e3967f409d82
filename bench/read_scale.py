"""What reading runs back costs as the log grows: the run index against the number of runs recorded.

For each size (1k and 10k runs; 100k with ``--large``) a fresh JetStream server is filled
fast: whole runs as the engine records them (:mod:`engine.testing.recorded_runs`, two turns
each) published straight to the stream, no episode run. The index of runs is then built
once (timed apart), and each command is run in this process exactly as `apollo` runs it
(``engine.cli.main.main``: settings, connect, index catch-up, query, output):

* ``runs --limit 20`` with the index caught up, and again with 20 runs recorded since; and
  as its own process (``python -m engine``: interpreter start and imports included);
* ``runs --json`` (rows per second over every run);
* ``show PREFIX`` (an unambiguous prefix of a run id);
* ``export`` of the newest 1% (``--since``) and of all runs (samples per second);
* ``report`` of the newest 1%.

Then the bytes one run takes in the stream at 1, 4 and 16 turns, logical (its events) and on
disk (the stream's S2 block compression, measured on 150 engine runs of 16 steps whose replies
are about as hard to compress as prose). Targets: ``runs --limit 20`` under 1 s at 100k runs
and within 1.5x of its time at the smallest size; ``--json`` at least 20,000 rows/s; a 16-step
run's bytes on disk within 1.5x the sum of its distinct texts.

    python bench/read_scale.py [--large] [--sizes N ...]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import hashlib
import itertools
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import msgspec

# Run as a script, this file's folder heads sys.path and its name would hide packages.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).resolve().parent]

# ruff: noqa: E402 (imports follow the sys.path fix)
from engine.app.operations import submission
from engine.cli.main import main as apollo
from engine.nats.jetstream import JetStreamEventLog
from engine.nats.server import NatsServerProcess
from engine.runtime.run_index import RunIndex
from engine.testing.harness import EchoPython, make_settings, new_memory_log, run_until_done, services
from engine.testing.recorded_runs import EPOCH, recorded_run, spec_for
from events.codec import encode
from events.model import ModelCallRequested, ModelResponded
from events.subjects import subject_for
from events.tool import ToolReturned
from handlers.ports import ModelReply

ROOT = Path(__file__).resolve().parent.parent
LIMIT_TARGET_S = 1.0
GROWTH_TARGET = 1.5
JSON_TARGET = 20_000
DISTINCT_TARGET = 1.5


def run_spec(number: int, turns: int = 2):  # a RunSpec
    """The ``number``-th run, its id made unique in its first 12 characters (prefixes pick one)."""
    spec = spec_for(number, turns=turns)
    tail = hashlib.sha1(spec.run_id.encode(), usedforsecurity=False).hexdigest()[:6]
    return dataclasses.replace(spec, run_id=f"r{tail}-{number:08d}")


async def fill(url: str, first: int, count: int, turns: int = 2) -> int:
    """Publish ``count`` whole runs from number ``first``; returns the stream's bytes afterwards."""
    log = await JetStreamEventLog.connect(url, manage_streams=True)
    try:
        for number in range(first, first + count):
            for event in recorded_run(run_spec(number, turns)):
                await log.js.publish_async(subject_for(event), encode(event),
                                           headers={"Nats-Msg-Id": event.event_id})
            if number % 200 == 199:
                await log.js.publish_async_completed()
        await log.js.publish_async_completed()
        info = await log.js.stream_info(log.stream)
        return int(info.state.bytes)
    finally:
        await log.close()


async def build_index(url: str, data_dir: Path) -> int:
    log = await JetStreamEventLog.connect(url)
    try:
        index = await RunIndex.in_data_dir(log, data_dir)
        count = index.count()
        index.close()
        return count
    finally:
        await log.close()


def timed(*argv: str, repeats: int = 1) -> float:
    """Median seconds of ``apollo ARGV`` run in this process (its output discarded)."""
    times = []
    for _ in range(repeats):
        with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
            started = time.perf_counter()
            code = apollo(list(argv))
            times.append(time.perf_counter() - started)
        if code != 0:
            raise SystemExit(f"apollo {' '.join(argv)} exited {code}")
    return statistics.median(times)


def own_process(*argv: str, repeats: int = 3) -> float:
    """Median seconds of ``python -m engine ARGV`` as a user runs it (same environment)."""
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", "engine", *argv], cwd=ROOT, capture_output=True,
                              check=False)
        times.append(time.perf_counter() - started)
        if done.returncode != 0:
            raise SystemExit(f"apollo {' '.join(argv)} exited {done.returncode}: {done.stderr[-2000:]!r}")
    return statistics.median(times)


def measure(size: int, baseline: list[float]) -> None:
    with tempfile.TemporaryDirectory(prefix="apollo-read-scale-") as tmp, \
            NatsServerProcess(store_dir=Path(tmp) / "nats") as server:
        data_dir = Path(tmp) / "data"
        os.environ.update(APOLLO_DATA_DIR=str(data_dir), APOLLO_NATS_URL=server.url)
        started = time.perf_counter()
        stream_bytes = asyncio.run(fill(server.url, 0, size))
        t_fill = time.perf_counter() - started
        started = time.perf_counter()
        indexed = asyncio.run(build_index(server.url, data_dir))
        t_build = time.perf_counter() - started
        assert indexed == size, (indexed, size)
        t_limit = timed("runs", "--limit", "20", repeats=3)
        t_limit_proc = own_process("runs", "--limit", "20")
        asyncio.run(fill(server.url, size, 20))
        t_limit_new = timed("runs", "--limit", "20")
        total = size + 20
        t_json = timed("runs", "--json")
        t_show = timed("show", run_spec(size // 2).run_id[:12], repeats=3)
        newest = max(1, total // 100)
        since = (EPOCH + timedelta(seconds=total - newest)).isoformat()
        out = Path(tmp) / "samples.jsonl"
        t_export_new = timed("export", "--format", "jsonl", "--out", str(out), "--since", since)
        new_samples = _lines(out)
        t_export_all = timed("export", "--format", "jsonl", "--out", str(out))
        all_samples = _lines(out)
        t_report = timed("report", "--since", since, "--out", str(Path(tmp) / "report.html"))
    if not baseline:
        baseline += [t_limit, t_limit_proc]
    growth = t_limit / baseline[0]
    verdict = "ok" if t_limit < LIMIT_TARGET_S and growth <= GROWTH_TARGET else "MISSED"
    print(f"{size:>7,} runs ({stream_bytes / size / 1024:.1f} KiB each): filled in {t_fill:.1f} s, "
          f"index built once in {t_build:.1f} s ({size / t_build:,.0f} runs/s)", flush=True)
    print(f"    runs --limit 20          {t_limit * 1000:8.0f} ms   {growth:.2f}x its time at the smallest size "
          f"(target < {LIMIT_TARGET_S:.0f} s and <= {GROWTH_TARGET}x: {verdict})")
    print(f"    ... 20 runs recorded since {t_limit_new * 1000:6.0f} ms   (catch-up included)")
    print(f"    ... as its own process   {t_limit_proc * 1000:8.0f} ms   {t_limit_proc / baseline[1]:.2f}x "
          "(interpreter start and imports included)")
    json_rate = total / t_json
    beyond = total / (t_json - t_limit) if t_json > t_limit else float("inf")
    print(f"    runs --json              {t_json * 1000:8.0f} ms   {json_rate:,.0f} rows/s "
          f"(target >= {JSON_TARGET:,}: {'ok' if json_rate >= JSON_TARGET else 'MISSED'}); "
          f"{beyond:,.0f} rows/s past a --limit 20 listing's fixed cost")
    print(f"    show PREFIX              {t_show * 1000:8.0f} ms")
    print(f"    export newest 1%         {t_export_new * 1000:8.0f} ms   {new_samples / t_export_new:,.0f} samples/s "
          f"({new_samples} samples)")
    print(f"    export all               {t_export_all * 1000:8.0f} ms   {all_samples / t_export_all:,.0f} samples/s "
          f"({all_samples} samples)")
    print(f"    report newest 1%         {t_report * 1000:8.0f} ms", flush=True)


def _lines(path: Path) -> int:
    with path.open("rb") as handle:
        return sum(1 for _ in handle)


TURNS = (1, 4, 16)


def bytes_per_run(runs: int = 20) -> None:
    """Stream bytes one run takes at 1, 4 and 16 turns (its events as stored, headers included),
    against the same runs with every prompt written whole (as runs recorded before deltas were)."""
    stored_kib = {}
    for turns in TURNS:
        with tempfile.TemporaryDirectory(prefix="apollo-read-bytes-") as tmp, \
                NatsServerProcess(store_dir=Path(tmp)) as server:
            stored_kib[turns] = asyncio.run(fill(server.url, 0, runs, turns)) / runs / 1024
    print("bytes per run: " + ", ".join(f"{t} turns {stored_kib[t]:.1f} KiB" for t in TURNS), flush=True)
    whole = {t: _whole_prompt_bytes(t) / 1024 for t in TURNS}
    body = {t: sum(len(encode(e)) for e in recorded_run(run_spec(0, t))) / 1024 for t in TURNS}
    per_turn = [(body[b] - body[a]) / (b - a) for a, b in itertools.pairwise(TURNS)]
    print("    event bodies: " + ", ".join(f"{t} turns {body[t]:.1f} KiB (prompts whole: {whole[t]:.1f})"
                                           for t in TURNS), flush=True)
    print(f"    each further turn adds {per_turn[0]:.2f} KiB (turns 1-4) and {per_turn[1]:.2f} KiB (turns 4-16): "
          f"{'linear' if per_turn[1] <= 1.5 * per_turn[0] else 'GROWING'}; with whole prompts "
          f"{(whole[16] - whole[4]) / 12:.2f} KiB at turns 4-16", flush=True)
    distinct = _distinct_text_bytes(16) / 1024
    ratio = stored_kib[16] / distinct
    print(f"    16 turns: {stored_kib[16]:.1f} KiB of events for {distinct:.1f} KiB of distinct texts: {ratio:.1f}x "
          "logical (its texts are tiny, so event envelopes dominate; the target is judged on disk, below)", flush=True)
    engine_bytes()
    disk_bytes()


_VOCABULARY = tuple("".join(random.Random(n).choices("abcdefghijklmnopqrstuvwxyz", k=2 + n % 7)) for n in range(4096))
"""Words of random letters: replies about as hard to compress as prose, so no compression figure
comes from a toy vocabulary."""


class _LongReplies:
    """A model whose tool steps think for about 1.2 KB each (replies of a real size), then answer;
    ``seed`` makes each run's replies its own (so no run's texts repeat another's)."""

    def __init__(self, steps: int, seed: int = 0) -> None:
        self.left = steps
        self.seed = seed

    def client_for(self, role: str, spec: Any, *, branch: str | None = None) -> _LongReplies:
        return self

    async def complete(self, messages: Any, params: Any) -> ModelReply:
        self.left -= 1
        if self.left <= 0:
            return ModelReply(text="<answer>\\boxed{42}</answer>", model="bench")
        rnd = random.Random(self.seed * 1_000 + self.left)
        words = " ".join(rnd.choice(_VOCABULARY) for _ in range(200))
        return ModelReply(text=f"<think>{words}</think><python_code>print({self.left} * 7)</python_code>",
                          model="bench")


async def _engine_events(steps: int, seed: int = 0) -> list[Any]:
    """The events of one engine run of ``steps`` steps, every step in the window, its own texts."""
    log = new_memory_log()
    settings = make_settings({"episode": {"max_steps": steps, "history_length": steps}})
    run_id = f"bytes-{seed:06d}"
    await log.append(submission(run_id, f"What is {seed} times 7? " * 10, ground_truth="42"))
    await run_until_done(log, services(settings, models=_LongReplies(steps, seed),
                                       tools={"python_code": EchoPython()}), [run_id])
    return [record.event for record in await log.read_run(run_id)]


async def _engine_run(steps: int, *, whole: bool) -> tuple[int, int]:
    """(bytes stored, bytes of distinct texts) of one engine run of ``steps`` steps, every step in the window."""
    events = await _engine_events(steps)
    if whole:
        events = [msgspec.structs.replace(e, prompt_delta=None) if isinstance(e, ModelCallRequested) else e
                  for e in events]
        return sum(len(msgspec.json.encode(e)) for e in events), 0
    return sum(len(encode(e)) for e in events), _distinct(events)


def engine_bytes(steps: int = 16) -> None:
    """Bytes of a 16-step engine run with replies of a real size, as stored and with whole prompts."""
    stored, distinct = asyncio.run(_engine_run(steps, whole=False))
    whole, _ = asyncio.run(_engine_run(steps, whole=True))
    print(f"    a {steps}-step engine run with 1.2 KB replies: {stored / 1024:.1f} KiB of events (prompts whole: "
          f"{whole / 1024:.1f}) for {distinct / 1024:.1f} KiB of distinct texts: {stored / distinct:.1f}x logical, "
          "before the stream's block compression", flush=True)


async def _publish_engine_runs(url: str, steps: int, runs: int) -> tuple[int, int]:
    """Publish ``runs`` engine runs (each its own texts) to a real stream; (stream bytes, distinct bytes)."""
    log = await JetStreamEventLog.connect(url, manage_streams=True)
    distinct = 0
    try:
        for seed in range(runs):
            events = await _engine_events(steps, seed)
            distinct += _distinct(events)
            for event in events:
                await log.js.publish_async(subject_for(event), encode(event), headers={"Nats-Msg-Id": event.event_id})
            await log.js.publish_async_completed()
        info = await log.js.stream_info(log.stream)
        return int(info.state.bytes), distinct
    finally:
        await log.close()


def disk_bytes(steps: int = 16, runs: int = 150) -> None:
    """What a run of ``steps`` steps costs on disk, with the stream's S2 block compression: its
    logical bytes times the ratio the server achieved on its full (compressed) blocks. The last
    block, still being written, is kept uncompressed by the server and is left out of the ratio."""
    with tempfile.TemporaryDirectory(prefix="apollo-disk-bytes-") as tmp, \
            NatsServerProcess(store_dir=Path(tmp)) as server:
        logical, distinct = asyncio.run(_publish_engine_runs(server.url, steps, runs))
        blocks = sorted(Path(tmp).glob("jetstream/*/streams/*/msgs/*.blk"), key=lambda p: int(p.stem))
        blocks = [b for b in blocks if "/streams/APOLLO/" in b.as_posix()]
        if len(blocks) < 2:
            print(f"    on disk: only {len(blocks)} block written; publish more runs to see compression", flush=True)
            return
        active = blocks[-1].stat().st_size
        sealed = sum(b.stat().st_size for b in blocks[:-1])
        ratio = sealed / (logical - active)
    per_run, per_distinct = logical / runs * ratio / 1024, distinct / runs / 1024
    print(f"    on disk (S2 blocks, {len(blocks) - 1} full of {runs} runs): a {steps}-step run takes "
          f"{per_run:.1f} KiB for {per_distinct:.1f} KiB of distinct texts: {per_run / per_distinct:.2f}x "
          f"(target <= {DISTINCT_TARGET}x: {'ok' if per_run / per_distinct <= DISTINCT_TARGET else 'MISSED'}); "
          f"logical {logical / runs / 1024:.1f} KiB, compressed {1 / ratio:.1f}x", flush=True)


def _distinct(events: list[Any]) -> int:
    """The run's texts counted once: its first prompt (instructions and question), replies, tool results."""
    first = next(e for e in events if isinstance(e, ModelCallRequested))
    texts = [m.content for m in first.messages]
    texts += [e.text for e in events if isinstance(e, ModelResponded)]
    texts += [e.result for e in events if isinstance(e, ToolReturned)]
    return sum(len(text.encode()) for text in texts)


def _distinct_text_bytes(turns: int) -> int:
    return _distinct(recorded_run(run_spec(0, turns)))


def _whole_prompt_bytes(turns: int) -> int:
    """A run's event bodies with each request's prompt and each sealed turn's written out whole."""
    events = recorded_run(run_spec(0, turns))
    return sum(len(msgspec.json.encode(msgspec.structs.replace(e, prompt_delta=None)
                                       if isinstance(e, ModelCallRequested) else e)) for e in events)


def main(argv: list[str] | None = None, run: Callable[[int, list[float]], None] = measure) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--large", action="store_true", help="100k runs too (a few minutes to fill)")
    parser.add_argument("--sizes", type=int, nargs="+", help="these numbers of runs instead")
    args = parser.parse_args(argv)
    sizes = args.sizes or ([1_000, 10_000, 100_000] if args.large else [1_000, 10_000])
    print(f"{os.cpu_count()} CPUs; commands run in this process as `apollo` runs them", flush=True)
    baseline: list[float] = []
    for size in sizes:
        run(size, baseline)
    bytes_per_run()


if __name__ == "__main__":
    main()
