"""Small helpers shared by the benchmarks (percentiles, a throwaway nats-server)."""

from __future__ import annotations

import contextlib
import json
import statistics
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.nats.server import NatsServerProcess


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return float("nan")
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary_ms(samples_s: list[float]) -> dict[str, float]:
    ms = [s * 1000 for s in samples_s]
    return {"p50": percentile(ms, 50), "p99": percentile(ms, 99), "mean": statistics.fmean(ms)}


@contextlib.contextmanager
def nats_server(*, fsync_always: bool = False) -> Iterator[NatsServerProcess]:
    """A fresh JetStream server in a temporary store, stopped afterwards."""
    with tempfile.TemporaryDirectory(prefix="apollo-bench-") as tmp:
        server = NatsServerProcess(store_dir=Path(tmp) / "store", fsync_always=fsync_always).start()
        try:
            yield server
        finally:
            server.stop()


@contextlib.contextmanager
def fake_model_process(
    script: dict[str, Any], latency_ms: float, model: str, jitter_ms: float = 0.0
) -> Iterator[str]:
    """The fake OpenAI-compatible model in its own process, as a real model server is (its
    CPU is not the benchmark's), replying by ``script``'s rules after ``latency_ms``
    +/- ``jitter_ms``; yields its base URL."""
    with tempfile.TemporaryDirectory(prefix="apollo-bench-model-") as folder:
        rules = Path(folder) / "script.json"
        rules.write_text(json.dumps(script))
        command = [sys.executable, "-m", "engine.models.fake_server", "--port", "0", "--script", str(rules),
                   "--latency-ms", str(latency_ms), "--jitter-ms", str(jitter_ms), "--model", model]
        process = subprocess.Popen(  # our own module
            command, cwd=Path(__file__).resolve().parent.parent, stdout=subprocess.PIPE, text=True
        )
        try:
            url = process.stdout.readline().strip() if process.stdout else ""
            if not url.startswith("http"):
                raise SystemExit(f"fake model server did not start: {url!r}")
            yield url
        finally:
            process.terminate()
            try:
                process.wait(20)
            except subprocess.TimeoutExpired:
                process.kill()
