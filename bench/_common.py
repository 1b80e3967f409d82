"""Small helpers shared by the benchmarks (percentiles, a throwaway nats-server)."""

from __future__ import annotations

import contextlib
import statistics
import tempfile
from collections.abc import Iterator
from pathlib import Path

from engine.nats_server import NatsServerProcess


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
