"""`apollo up` logs one line per run started and finished, and each model endpoint once."""

from __future__ import annotations

import asyncio
import uuid
from datetime import UTC, datetime

import nats
from structlog.testing import capture_logs

from engine.runtime.run_activity import RunActivity
from engine.testing.event_builders import started, submitted
from events import encode
from events.run import RunCompleted, RunFailed


def _ending(run_id: str, failed: bool = False) -> RunCompleted | RunFailed:
    common = {"event_id": str(uuid.uuid4()), "run_id": run_id, "occurred_at": datetime.now(UTC)}
    return RunFailed(**common, reason="model unreachable") if failed else RunCompleted(
        **common, done_reason="answer", answer="5", score=1.0)


def _policy(model: str, url: str) -> dict:
    return {"models": {"policy": {"model": model, "base_url": url, "api_key": "secret"}}}


def test_a_run_logs_its_start_and_its_end() -> None:
    """run_started names workflow and model; run_finished the status, score and how long it took."""
    activity = RunActivity()
    with capture_logs() as logs:
        activity.seen(encode(started("r-1", settings=_policy("qwen", "http://gpu:8000/v1"))), "s")
        activity.seen(encode(_ending("r-1")), "s")
        activity.seen(encode(started("r-2", settings=_policy("qwen", "http://gpu:8000/v1"))), "s")
        activity.seen(encode(_ending("r-2", failed=True)), "s")
    events = [(line["event"], line.get("run_id")) for line in logs]
    assert events == [("run_started", "r-1"), ("model_endpoint", None), ("run_finished", "r-1"),
                      ("run_started", "r-2"), ("run_finished", "r-2")]  # the endpoint once
    assert logs[0]["model"] == "qwen" and logs[1]["url"] == "http://gpu:8000/v1"
    assert logs[2]["status"] == "completed" and logs[2]["score"] == 1.0 and logs[2]["seconds"] >= 0
    assert logs[4]["status"] == "failed" and logs[4]["reason"] == "model unreachable"
    assert all("secret" not in str(line) for line in logs)


def test_garbage_on_a_lifecycle_subject_is_named_not_fatal() -> None:
    """An undecodable message gives one warning naming its subject."""
    with capture_logs() as logs:
        RunActivity().seen(b"{not json", "apollo.run.x.run.started")
    assert [(line["event"], line["subject"]) for line in logs] == [("run_event_unreadable",
                                                                     "apollo.run.x.run.started")]


async def test_appends_on_the_stream_reach_the_log_lines(nats_server, jetstream_log) -> None:
    """Subscribed to a real server, appends of run events become log lines; other events do not."""
    nc = await nats.connect(nats_server.url)
    try:
        with capture_logs() as logs:
            await RunActivity().subscribe(nc)
            await nc.flush()
            await jetstream_log.append(submitted("r-3"))
            await jetstream_log.append(started("r-3", settings=_policy("m", "http://h:1/v1")))
            await jetstream_log.append(_ending("r-3"))
            for _ in range(200):
                if any(line["event"] == "run_finished" for line in logs):
                    break
                await asyncio.sleep(0.02)
    finally:
        await nc.close()
    assert [line["event"] for line in logs] == ["run_started", "model_endpoint", "run_finished"]
