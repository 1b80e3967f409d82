"""The Prometheus endpoint: dispatcher observer counters, histograms, lag gauges, HTTP exposition."""

from __future__ import annotations

import asyncio
import urllib.error
import urllib.request
from collections.abc import Sequence

import pytest

from engine.eventlog.memory import InMemoryEventLog
from engine.runtime.dispatcher import Dispatcher
from engine.runtime.worker_metrics import Histogram, Metrics, MetricsServer, watch_consumer
from engine.testing.event_builders import submitted
from events.base import Event
from events.run import ProblemSubmitted, RunStarted
from handlers.context import HandlerContext, Services
from handlers.routes import Route
from tests.engine.test_dispatcher import _has, drain, fast, routes


def _get(url: str) -> tuple[int, str, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # loopback test server
            return response.status, response.headers["Content-Type"], response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.headers["Content-Type"], exc.read().decode()


def test_histogram_buckets_are_cumulative() -> None:
    """Each bucket counts every observation at or below its bound; +Inf counts all."""
    hist = Histogram((0.1, 1.0))
    for value in (0.05, 0.1, 0.5, 7.0):
        hist.observe(value)
    lines = hist.samples("x", {})
    assert lines[:3] == ['x_bucket{le="0.1"} 2', 'x_bucket{le="1"} 3', 'x_bucket{le="+Inf"} 4']
    assert lines[-1] == "x_count 4"


def test_observer_hooks_show_up_in_the_exposition() -> None:
    """Events by tag, handler and model latency, redeliveries, failures and lag are rendered."""
    metrics = Metrics(worker="w1")
    metrics.acked("run.started")
    metrics.acked("run.started")
    metrics.handled("model.call_requested", "call_model", 0.3)
    metrics.redelivered("model.call_requested", 2)
    metrics.failed("tool.call_requested", "run_tool", gave_up=True)
    metrics.consumer_state("apollo-workers", pending=7, ack_pending=2, redelivered=1, waiting=3)
    text = metrics.render()
    assert 'apollo_events_total{worker="w1",tag="run.started"} 2' in text
    assert 'apollo_handler_seconds_count{worker="w1",handler="call_model"} 1' in text
    assert 'apollo_model_call_seconds_bucket{worker="w1",le="0.5"} 1' in text
    assert 'apollo_redeliveries_total{worker="w1",tag="model.call_requested"} 1' in text
    assert 'gave_up="true"} 1' in text
    assert 'apollo_consumer_pending{consumer="apollo-workers"} 7' in text
    assert "# TYPE apollo_model_call_seconds histogram" in text


def test_label_values_are_escaped() -> None:
    """Quotes, backslashes and newlines in label values cannot break the format."""
    metrics = Metrics(worker='a"b\\c\nd')
    assert 'worker="a\\"b\\\\c\\nd"' in metrics.render()


async def test_dispatcher_reports_to_its_observer() -> None:
    """A real dispatcher run feeds the observer: acked events and handler timings."""
    log = InMemoryEventLog()
    await log.append(submitted("r-m"))
    metrics = Metrics(worker="w")
    dispatcher = Dispatcher(log, routes(), Services(), fast(), observer=metrics)
    await drain(dispatcher, log, until=lambda: _has(log, "r-m", RunStarted))
    assert metrics.events["problem.submitted"] == 1
    assert metrics.handlers["start"].n == 1


async def test_dispatcher_reports_failures_and_redeliveries() -> None:
    """A failing handler is counted on every delivery and once as given up."""

    async def broken(event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        raise RuntimeError("boom")

    log = InMemoryEventLog()
    await log.append(submitted("r-f"))
    metrics = Metrics(worker="w")
    dispatcher = Dispatcher(
        log, [Route(ProblemSubmitted, broken, "decide", "broken")], Services(), fast(max_deliveries=2), observer=metrics
    )

    async def gave_up() -> bool:
        return any(key[2] for key in metrics.failures)

    await drain(dispatcher, log, until=gave_up)
    assert metrics.failures[("problem.submitted", "broken", False)] == 1
    assert metrics.redeliveries["problem.submitted"] == 1


async def test_metrics_server_serves_the_text_format() -> None:
    """GET /metrics answers Prometheus text; /healthz answers ok; other paths 404."""
    metrics = Metrics(worker="w")
    metrics.acked("run.started")
    server = MetricsServer(metrics, host="127.0.0.1", port=0).start()
    try:
        base = f"http://127.0.0.1:{server.port}"
        status, content_type, body = await asyncio.to_thread(_get, f"{base}/metrics")
        assert status == 200 and content_type.startswith("text/plain; version=0.0.4")
        assert 'apollo_events_total{worker="w",tag="run.started"} 1' in body
        assert (await asyncio.to_thread(_get, f"{base}/healthz"))[0] == 200
        assert (await asyncio.to_thread(_get, f"{base}/../../etc/passwd"))[0] == 404
    finally:
        server.stop()


@pytest.mark.nats
async def test_consumer_lag_is_read_from_the_work_consumer(jetstream_log) -> None:
    """Undelivered events show up as pending on the lag gauge."""
    for index in range(3):
        await jetstream_log.append(submitted(f"r-lag-{index}"))
    metrics = Metrics(worker="w")
    watcher = asyncio.create_task(watch_consumer(jetstream_log, "apollo-workers", metrics, interval=0.05))
    try:
        # The server counts a message as pending a moment after acknowledging its append:
        # wait for the gauge to settle rather than take its first reading.
        for _ in range(100):
            if metrics.consumer.get("pending") == 3:
                break
            await asyncio.sleep(0.05)
    finally:
        watcher.cancel()
    assert metrics.consumer["pending"] == 3


async def test_a_metrics_port_in_use_is_one_error_naming_it() -> None:
    """`--metrics-port` on a port another process holds ends with one line naming the port, no traceback."""
    import socket

    from engine.errors import EngineError
    from engine.runtime.worker_metrics import exposed

    holder = socket.socket()
    holder.bind(("0.0.0.0", 0))  # where the metrics server binds
    holder.listen()
    port = holder.getsockname()[1]
    try:
        with pytest.raises(EngineError, match=rf"^cannot serve metrics on port {port}: Address already in use$"):
            async with exposed(InMemoryEventLog(), "apollo-workers", port):
                pass
    finally:
        holder.close()


@pytest.mark.parametrize(("args", "message"), [
    (["up", "--metrics-port", "99999"], "argument --metrics-port: must be between 1 and 65535, not 99999"),
    (["worker", "--metrics-port", "0"], "argument --metrics-port: must be between 1 and 65535, not 0"),
    (["up", "--metrics-port", "65535", "--workers", "2"],
     "--metrics-port 65535 with 2 workers needs ports up to 65536; the last is 65535"),
])
def test_metrics_ports_out_of_range_are_refused(args: list[str], message: str, tmp_path, monkeypatch, capsys) -> None:
    """A port past 65535 (for the last worker too) is one line before anything starts."""
    from engine.cli.main import main

    monkeypatch.setenv("APOLLO_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("APOLLO_NATS_URL", raising=False)
    try:
        code = main(args)
    except SystemExit as exit_:
        code = exit_.code
    assert code in (1, 2)
    assert message in capsys.readouterr().err
    assert not (tmp_path / "nats").exists()  # no server was started
