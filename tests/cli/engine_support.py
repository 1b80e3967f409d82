"""A running `apollo up` and a fake model server as separate processes, as a user has them."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.cli.support import ROOT, apollo

DEMO = ROOT / "examples" / "scripted" / "demo.json"
START_S = 60.0
"""Bound on a process getting ready (a generous one: the machine is shared)."""


@dataclass(frozen=True)
class FakeModel:
    """An OpenAI-compatible server answering with the scripted demo; serves ``fake-model``."""

    url: str

    def calls(self, model: str = "fake-model") -> int:
        """Chat completions asked of ``model`` so far."""
        with urllib.request.urlopen(self.url.removesuffix("/v1") + "/fake/stats", timeout=10) as reply:
            return int(json.load(reply)["requests_by_model"].get(model, 0))


@contextlib.contextmanager
def fake_model_server(*flags: str) -> Iterator[FakeModel]:
    """The fake server as a process; ``flags`` are its own (``--latency-ms 5000``)."""
    process = subprocess.Popen([sys.executable, "-m", "engine.models.fake_server", "--script", str(DEMO),
                                *flags], cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield FakeModel(process.stdout.readline().strip())
    finally:
        process.terminate()
        process.wait(30)


@contextlib.contextmanager
def running_engine(data: Path, *args: str) -> Iterator[subprocess.Popen[bytes]]:
    """`apollo up` over ``data`` with the default (scripted demo) settings, until the block ends."""
    data.mkdir(parents=True, exist_ok=True)
    log = data.parent / f"up-{data.name}.log"
    env = {**os.environ, "APOLLO_DATA_DIR": str(data)}
    env.pop("APOLLO_NATS_URL", None)
    with log.open("wb") as err:
        process = subprocess.Popen([sys.executable, "-m", "engine", "up", *args], cwd=ROOT, env=env,
                                   stdout=subprocess.DEVNULL, stderr=err, start_new_session=True)
    try:
        deadline = time.monotonic() + START_S
        while "Ctrl-C to stop" not in log.read_text(errors="replace"):
            assert process.poll() is None, log.read_text(errors="replace")[-3000:]
            assert time.monotonic() < deadline, f"apollo up not ready: {log.read_text(errors='replace')[-3000:]}"
            time.sleep(0.1)
        yield process
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(60)


def recorded(data: Path, run_id: str) -> list[dict[str, Any]]:
    """A run's events as `apollo show RUN --json` prints them."""
    code, out, err = apollo(data, "show", run_id, "--json")
    assert code == 0, err[-2000:]
    return [json.loads(line)["event"] for line in out.splitlines() if line.strip()]


def finished(data: Path, run_id: str, *, within: float = 90.0) -> list[dict[str, Any]]:
    """The run's events once it has ended (polled with `apollo show`)."""
    deadline = time.monotonic() + within
    while True:
        events = recorded(data, run_id)
        if any(e["type"] in ("run.completed", "run.failed") for e in events):
            return events
        assert time.monotonic() < deadline, f"run {run_id} did not end: {[e['type'] for e in events]}"
        time.sleep(1.0)


def run_started(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "run.started")
