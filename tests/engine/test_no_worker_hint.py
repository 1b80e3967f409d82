"""A submission nobody takes: the user is told no worker pulls from that NATS, and what to run."""

from __future__ import annotations

import asyncio

from engine.app.bootstrap import open_runtime
from engine.app.operations import submission, submit, warn_if_no_worker
from engine.config.settings import validate
from engine.errors import AccessDenied
from engine.nats.jetstream import JetStreamEventLog


def _settings(url: str, tmp_path):
    return validate({"nats": {"url": url}, "data_dir": str(tmp_path)})


async def _engine_streams(url: str) -> None:
    """The stream and work consumer an engine would have made (then its workers died)."""
    log = await JetStreamEventLog.connect(url)
    await log.close()


async def test_no_live_worker_is_reported_once_with_the_fix(nats_server, tmp_path, capsys) -> None:
    """Streams exist but no worker pulls: one line naming the URL and `apollo up`."""
    await _engine_streams(nats_server.url)
    runtime = await open_runtime(_settings(nats_server.url, tmp_path), start_server=False)
    try:
        await submit(runtime.log, submission("r-alone", "What is 1+1?"))
        await asyncio.wait_for(warn_if_no_worker(runtime, "r-alone", f"NATS at {nats_server.url}", after=0.1), 60)
    finally:
        await runtime.close()
    lines = [line for line in capsys.readouterr().err.splitlines() if "no worker" in line]
    assert len(lines) == 1
    assert nats_server.url in lines[0]
    assert "apollo up" in lines[0]


async def test_a_worker_check_that_fails_still_gives_the_hint(nats_server, tmp_path, capsys, monkeypatch) -> None:
    """When NATS will not say whether workers pull (a role without that permission), the untaken run is still named."""
    await _engine_streams(nats_server.url)
    runtime = await open_runtime(_settings(nats_server.url, tmp_path), start_server=False)

    async def refused(consumer: str) -> bool:
        raise AccessDenied(f"NATS refused this client permission to publish to $JS.API.CONSUMER.INFO.APOLLO.{consumer}")

    monkeypatch.setattr(runtime.log, "workers_active", refused)
    try:
        await submit(runtime.log, submission("r-unchecked", "What is 1+1?"))
        await asyncio.wait_for(warn_if_no_worker(runtime, "r-unchecked", "NATS", after=0.1), 60)
    finally:
        await runtime.close()
    [line] = [line for line in capsys.readouterr().err.splitlines() if "r-unchecked" in line]
    assert "no worker has taken it (whether one pulls from NATS could not be checked: NATS refused" in line
    assert "apollo up" in line


async def test_a_pulling_worker_means_no_hint(nats_server, tmp_path, capsys) -> None:
    """A worker with a pull open (here: a bare work queue) is alive: nothing is printed."""
    await _engine_streams(nats_server.url)
    runtime = await open_runtime(_settings(nats_server.url, tmp_path), start_server=False)
    worker = await JetStreamEventLog.connect(nats_server.url)
    try:
        queue = await worker.work_queue("apollo-workers")
        pulling = asyncio.create_task(queue.pull(1, 30.0))  # a worker waiting for work
        await asyncio.sleep(0.3)
        await warn_if_no_worker(runtime, "r-unsubmitted", "NATS", after=0.1)
        pulling.cancel()
    finally:
        await worker.close()
        await runtime.close()
    assert "no worker" not in capsys.readouterr().err


def test_a_dataset_run_with_no_worker_says_so(nats_server, tmp_path) -> None:
    """`apollo run --nats-url` on a NATS whose workers are gone: one line naming the URL, not silence."""
    import json
    import os
    import subprocess
    import sys
    import time

    asyncio.run(_engine_streams(nats_server.url))
    dataset = tmp_path / "one.jsonl"
    dataset.write_text(json.dumps({"problem": "What is 1+1?", "answer": "2"}) + "\n")
    env = {**os.environ, "APOLLO_DATA_DIR": str(tmp_path / "data")}
    command = [sys.executable, "-m", "engine", "run", "--dataset", str(dataset), "--nats-url", nats_server.url,
               "--out", str(tmp_path / "out.jsonl")]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True,
                               cwd=tmp_path)
    seen: list[str] = []
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and process.poll() is None:
            line = process.stderr.readline()
            seen.append(line)
            if "no worker" in line:
                break
    finally:
        process.kill()
        process.communicate()
    hint = [line for line in seen if "no worker" in line]
    assert hint, "".join(seen)
    assert nats_server.url in hint[0] and "apollo up" in hint[0]
