"""Clients through a failover: no stream management on connect, bounded retries, quiet logs.

Issue 26, F and "Also": `apollo submit` failed during a leader election because every
client re-applied the stream definitions; two workers appending the same output at once
counted a handler failure; nats-py printed a traceback for every reconnect attempt.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import nats.errors
import pytest
import structlog

from engine.app.bootstrap import open_runtime
from engine.app.log_setup import configure_logging
from engine.app.operations import submission, submit
from engine.config.settings import validate
from engine.errors import BusUnavailable, StreamSetupError
from engine.nats.jetstream import DUPLICATE_IN_PROCESS, JetStreamEventLog
from engine.nats.publisher import PublishRefused, PublishTimeout
from engine.nats.server import NatsServerProcess
from engine.nats.transient import is_transient, retrying
from engine.testing.event_builders import submitted
from events import ProblemSubmitted

pytestmark = pytest.mark.nats

CONSUMER = "apollo-workers"


async def _ack_wait(log: JetStreamEventLog) -> float:
    return (await log.js.consumer_info(log.stream, CONSUMER)).config.ack_wait


async def test_a_client_that_only_submits_or_reads_leaves_the_definitions_alone(nats_server) -> None:
    """The engine's consumer keeps its settings when a client connects; the engine re-applies them."""
    engine = await JetStreamEventLog.connect(nats_server.url, ack_wait=42)
    try:
        client = await JetStreamEventLog.connect(nats_server.url, ack_wait=7, manage_streams=False)
        await submit(client, submitted("r-client"))
        assert [type(r.event) for r in await client.read_run("r-client")] == [ProblemSubmitted]
        await client.close()
        assert await _ack_wait(engine) == 42
        again = await JetStreamEventLog.connect(nats_server.url, ack_wait=7)
        await again.close()
        assert await _ack_wait(engine) == 7
    finally:
        await engine.close()


async def test_cli_clients_do_not_manage_streams_and_the_engine_does(nats_server) -> None:
    """open_runtime: a submit/read client looks the stream up; `apollo up`/`worker` apply the definitions."""
    engine = await JetStreamEventLog.connect(nats_server.url, ack_wait=42)
    settings = validate({"nats": {"url": nats_server.url, "ack_wait": 9}})
    try:
        client = await open_runtime(settings, start_server=False)
        await client.close()
        assert await _ack_wait(engine) == 42
        worker = await open_runtime(settings, start_server=False, manage_streams=True)
        await worker.close()
        assert await _ack_wait(engine) == 9
    finally:
        await engine.close()


async def test_a_client_on_a_server_without_the_stream_says_how_to_create_it(nats_server) -> None:
    """One clear line, and nothing created behind the engine's back."""
    with pytest.raises(StreamSetupError, match="apollo streams ensure") as raised:
        await JetStreamEventLog.connect(nats_server.url, manage_streams=False)
    assert "\n" not in str(raised.value)
    nc = await nats.connect(nats_server.url)
    try:
        assert [info.config.name async for info in _streams(nc)] == []
    finally:
        await nc.close()


async def _streams(nc):  # a small async generator over stream infos
    for info in await nc.jetstream().streams_info():
        yield info


async def test_a_submission_during_a_server_restart_is_retried_and_stored(tmp_path: Path) -> None:
    """The server goes away under `submit` and comes back on the same port: the run is recorded once."""
    server = NatsServerProcess(store_dir=tmp_path / "nats").start()
    engine = await JetStreamEventLog.connect(server.url)
    await engine.close()
    client = await JetStreamEventLog.connect(server.url, manage_streams=False)
    try:
        server.stop()
        pending = asyncio.create_task(submit(client, submission("r-restart", "What is 2+2?")))
        await asyncio.sleep(1.5)
        assert not pending.done()
        server.start()
        await asyncio.wait_for(pending, 40)
        records = await retrying(lambda: client.read_run("r-restart"), doing="read r-restart")
        assert [record.event.event_id for record in records] == ["r-restart"]
    finally:
        await client.close()
        server.stop()


async def test_a_failover_that_outlasts_the_bound_ends_with_one_line_naming_the_command() -> None:
    """Transient errors are retried for the bound, then one BusUnavailable line says what failed."""
    tries = 0

    async def always_times_out() -> None:
        nonlocal tries
        tries += 1
        raise PublishTimeout("no acknowledgement within 10 s")

    with pytest.raises(BusUnavailable) as raised:
        await retrying(always_times_out, doing="submit run r-x", within=1.0)
    message = str(raised.value)
    assert message.startswith("cannot submit run r-x: NATS kept failing for 1 s")
    assert "no acknowledgement" in message and "\n" not in message
    assert tries >= 3


async def test_errors_that_a_failover_does_not_explain_are_not_retried() -> None:
    """A refusal (say, a wrong expected sequence) fails at once, unchanged."""
    tries = 0

    async def refused() -> None:
        nonlocal tries
        tries += 1
        raise PublishRefused(400, 10071, "wrong last sequence")

    with pytest.raises(PublishRefused):
        await retrying(refused, doing="append", within=5.0)
    assert tries == 1


@pytest.mark.parametrize(
    ("error", "transient"),
    [
        (nats.errors.TimeoutError(), True),
        (nats.errors.NoRespondersError(), True),
        (PublishRefused(503, 10008, "JetStream system temporarily unavailable"), True),
        (PublishRefused(503, 0, "no stream stores this subject"), True),
        (PublishRefused(400, 10071, "wrong last sequence: 3"), False),
        (ValueError("bad input"), False),
        (StreamSetupError("cannot apply stream definitions: nats: timeout"), False),
    ],
)
def test_which_errors_count_as_a_failover(error: Exception, transient: bool) -> None:
    """Timeouts, no responders and 503s are transient; refusals and bugs are not."""
    assert is_transient(error) is transient


def test_a_wrapped_timeout_counts_as_a_failover() -> None:
    """The engine's own errors wrap what NATS said: the cause decides."""
    try:
        try:
            raise nats.errors.TimeoutError
        except nats.errors.TimeoutError as exc:
            raise StreamSetupError("cannot apply stream definitions: nats: timeout") from exc
    except StreamSetupError as wrapped:
        assert is_transient(wrapped)


class _InProcessTwice:
    """A publisher that answers 'duplicate message id is in process' twice, then passes through."""

    def __init__(self, real) -> None:  # the log's StreamPublisher
        self.real = real
        self.refusals = 2

    async def publish(self, subject: str, data: bytes, headers: dict[str, str] | None) -> tuple[int, bool]:
        if self.refusals:
            self.refusals -= 1
            raise PublishRefused(400, DUPLICATE_IN_PROCESS, "duplicate message id is in process")
        return await self.real.publish(subject, data, headers)

    async def close(self) -> None:
        await self.real.close()


async def test_duplicate_message_id_in_process_is_asked_again_not_failed(jetstream_log) -> None:
    """Err 10158: the append asks again until the other append settles, and reports the duplicate."""
    event = submitted("r-dup")
    first = await jetstream_log.append(event)
    jetstream_log.events.publisher = _InProcessTwice(jetstream_log.events.publisher)  # fault injection
    again = await jetstream_log.append(event)
    assert again.duplicate and again.seq == first.seq
    assert jetstream_log.events.publisher.refusals == 0


async def test_a_lost_server_is_one_log_line_per_reconnect_attempt_and_no_traceback(tmp_path, capfd) -> None:
    """nats-py's reconnect errors go through structlog: one JSON line each, no traceback."""
    configure_logging(json=True, level="info")
    server = NatsServerProcess(store_dir=tmp_path / "nats").start()
    log = await JetStreamEventLog.connect(server.url, name="apollo-test")
    try:
        server.kill()
        await asyncio.sleep(2.5)  # reconnect attempts every 0.5 s meanwhile
        attempts = sum(s.reconnects for s in log.nc._server_pool)  # nats-py's own count
    finally:
        await log.close()
        structlog.reset_defaults()  # this test's JSON logging stays with this test
    err = capfd.readouterr().err
    assert "Traceback" not in err
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert len(lines) == len(err.strip().splitlines()), err  # nothing but JSON lines
    failures = [line for line in lines if line["event"] == "nats_error"]
    assert attempts >= 2
    assert len(failures) in (attempts, attempts + 1)  # the last attempt may fail after the count
    assert {line["client"] for line in failures} == {"apollo-test"}
    assert all(line["error"] for line in failures)
    assert [line["event"] for line in lines].count("nats_disconnected") >= 1


async def test_a_direct_read_nobody_answers_is_an_error_not_an_empty_history(jetstream_log) -> None:
    """No responders to a direct get (as in a failover) raises a transient error; never a short history."""
    await jetstream_log.append(submitted("r-direct"))
    config = (await jetstream_log.js.stream_info(jetstream_log.stream)).config
    config.allow_direct = False  # nobody subscribes to direct gets any more
    await jetstream_log.js.update_stream(config)
    with pytest.raises(nats.errors.NoRespondersError) as raised:
        await jetstream_log.read_run("r-direct")
    assert is_transient(raised.value)


class _FailingReads:
    """Wraps a log: the first ``failures`` reads time out, as during an election."""

    def __init__(self, log: JetStreamEventLog, failures: int) -> None:
        self.log, self.failures = log, failures

    async def read_run(self, run_id: str, **options: object) -> list:
        if self.failures:
            self.failures -= 1
            raise nats.errors.TimeoutError
        return await self.log.read_run(run_id, **options)  # type: ignore[arg-type]


async def test_show_and_watch_read_through_a_failover(jetstream_log) -> None:
    """run_events (`apollo show`) and watch_run (`apollo solve`) retry reads that time out."""
    from types import SimpleNamespace

    from engine.app.operations import run_events, watch_run
    from events import RunCompleted

    await jetstream_log.append(submitted("r-watch"))
    await jetstream_log.append(RunCompleted(event_id="done", run_id="r-watch", occurred_at=submitted().occurred_at,
                                            done_reason="answer"))
    runtime = SimpleNamespace(log=_FailingReads(jetstream_log, failures=2))
    assert len(await run_events(runtime, "r-watch")) == 2  # type: ignore[arg-type]
    runtime.log.failures = 2
    assert len(await watch_run(runtime, "r-watch", timeout=30)) == 2  # type: ignore[arg-type]


async def test_closing_a_client_on_purpose_logs_nothing(nats_server, capfd) -> None:
    """A command that ends closes its connection: no disconnect warning on the way out."""
    configure_logging(json=True, level="info")
    try:
        log = await JetStreamEventLog.connect(nats_server.url)
        await log.close()
    finally:
        structlog.reset_defaults()
    assert capfd.readouterr().err == ""
