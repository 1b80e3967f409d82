"""Prometheus metrics of one worker process: what the dispatcher did, and how far behind it is.

The dispatcher calls the :class:`Metrics` observer inline (cheap counter updates); a
stdlib HTTP server in a daemon thread renders the text exposition format on
``GET /metrics``; a task polls the work consumer's ``num_pending`` for the lag gauge.
Each worker process serves its own port, so Prometheus scrapes every process
(``apollo up --workers N --metrics-port P`` uses ports P .. P+N-1).
"""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import math
import os
import socket
import threading
from collections import defaultdict
from collections.abc import Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import structlog

from engine.errors import EngineError

log = structlog.get_logger("apollo.metrics")

LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0)
"""Seconds; spans fast deciders (ms) to long model generations (minutes)."""

MODEL_TAG = "model.call_requested"
TOOL_TAG = "tool.call_requested"
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Histogram:
    """Cumulative-bucket histogram, as Prometheus expects it."""

    def __init__(self, buckets: Iterable[float] = LATENCY_BUCKETS) -> None:
        self.bounds = tuple(sorted(buckets))
        self.counts = [0] * (len(self.bounds) + 1)
        self.total = 0.0
        self.n = 0

    def observe(self, value: float) -> None:
        self.counts[bisect.bisect_left(self.bounds, value)] += 1
        self.total += value
        self.n += 1

    def samples(self, name: str, labels: dict[str, str]) -> list[str]:
        lines, running = [], 0
        for bound, count in zip((*self.bounds, math.inf), self.counts, strict=True):
            running += count
            le = "+Inf" if bound == math.inf else _number(bound)
            lines.append(f"{name}_bucket{_labels({**labels, 'le': le})} {running}")
        lines.append(f"{name}_sum{_labels(labels)} {_number(self.total)}")
        lines.append(f"{name}_count{_labels(labels)} {self.n}")
        return lines


class Metrics:
    """The dispatcher observer (see ``engine.runtime.dispatcher.DispatchObserver``) plus gauges."""

    def __init__(self, *, worker: str | None = None) -> None:
        self.worker = worker or f"{socket.gethostname()}:{os.getpid()}"
        self._lock = threading.Lock()
        self.events: defaultdict[str, int] = defaultdict(int)
        self.handlers: defaultdict[str, Histogram] = defaultdict(Histogram)
        self.model_calls = Histogram()
        self.tool_calls = Histogram()
        self.redeliveries: defaultdict[str, int] = defaultdict(int)
        self.failures: defaultdict[tuple[str, str, bool], int] = defaultdict(int)
        self.consumer: dict[str, float] = {}
        self.consumer_name = ""

    # -- observer hooks (called on the event loop) -----------------------------------

    def acked(self, tag: str) -> None:
        with self._lock:
            self.events[tag] += 1

    def handled(self, tag: str, handler: str, seconds: float) -> None:
        with self._lock:
            self.handlers[handler].observe(seconds)
            if tag == MODEL_TAG:
                self.model_calls.observe(seconds)
            elif tag == TOOL_TAG:
                self.tool_calls.observe(seconds)

    def failed(self, tag: str, handler: str, gave_up: bool) -> None:
        with self._lock:
            self.failures[(tag, handler, gave_up)] += 1

    def redelivered(self, tag: str, deliveries: int) -> None:
        with self._lock:
            self.redeliveries[tag] += 1

    def consumer_state(self, name: str, *, pending: int, ack_pending: int, redelivered: int, waiting: int) -> None:
        """Lag of the shared work consumer, as last seen by this worker."""
        with self._lock:
            self.consumer_name = name
            self.consumer = {
                "pending": pending,
                "ack_pending": ack_pending,
                "redelivered": redelivered,
                "waiting": waiting,
            }

    # -- exposition ------------------------------------------------------------------

    def render(self) -> str:
        """The Prometheus text exposition format (version 0.0.4)."""
        with self._lock:
            return "\n".join(self._lines()) + "\n"

    def _lines(self) -> list[str]:
        worker = {"worker": self.worker}
        out = [
            *_head("apollo_worker_info", "gauge", "This worker process (constant 1)."),
            f"apollo_worker_info{_labels(worker)} 1",
        ]
        out += _head("apollo_events_total", "counter", "Events handled and acknowledged, by tag.")
        out += [f"apollo_events_total{_labels({**worker, 'tag': t})} {n}" for t, n in sorted(self.events.items())]
        out += _head("apollo_handler_seconds", "histogram", "Time spent in one handler call.")
        for handler, hist in sorted(self.handlers.items()):
            out += hist.samples("apollo_handler_seconds", {**worker, "handler": handler})
        out += _head("apollo_model_call_seconds", "histogram", "Model call latency (call_model effector).")
        out += self.model_calls.samples("apollo_model_call_seconds", worker)
        out += _head("apollo_tool_call_seconds", "histogram", "Tool call latency (run_tool effector).")
        out += self.tool_calls.samples("apollo_tool_call_seconds", worker)
        out += _head("apollo_redeliveries_total", "counter", "Deliveries that were not the first, by tag.")
        out += [
            f"apollo_redeliveries_total{_labels({**worker, 'tag': t})} {n}"
            for t, n in sorted(self.redeliveries.items())
        ]
        out += _head("apollo_handler_failures_total", "counter", "Handler errors (gave_up: terminated).")
        out += [
            f"apollo_handler_failures_total{_labels({**worker, 'tag': t, 'handler': h, 'gave_up': str(g).lower()})} {n}"
            for (t, h, g), n in sorted(self.failures.items())
        ]
        gauges = (
            ("pending", "Messages not yet delivered by the work consumer (lag)."),
            ("ack_pending", "Messages delivered and not yet acknowledged."),
            ("redelivered", "Messages delivered more than once and still unacknowledged."),
            ("waiting", "Pull requests waiting (idle worker capacity)."),
        )
        for key, help_text in gauges:
            name = f"apollo_consumer_{key}"
            out += _head(name, "gauge", help_text)
            if key in self.consumer:
                out.append(f"{name}{_labels({'consumer': self.consumer_name})} {_number(self.consumer[key])}")
        return out


def _head(name: str, kind: str, help_text: str) -> list[str]:
    return [f"# HELP {name} {help_text}", f"# TYPE {name} {kind}"]


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    body = ",".join(f'{key}="{_escape(str(value))}"' for key, value in labels.items())
    return "{" + body + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _number(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))


class MetricsServer:
    """``GET /metrics`` (and ``/healthz``) on a daemon thread; port 0 picks a free one."""

    def __init__(self, metrics: Metrics, *, host: str = "0.0.0.0", port: int = 0) -> None:  # scraped from other hosts
        self.metrics = metrics
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(metrics))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="apollo-metrics", daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def start(self) -> MetricsServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()


def _handler_for(metrics: Metrics) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # http.server's naming
            if self.path.split("?")[0] == "/metrics":
                self._reply(200, metrics.render(), CONTENT_TYPE)
            elif self.path == "/healthz":
                self._reply(200, "ok\n", "text/plain")
            else:
                self._reply(404, "not found: try /metrics\n", "text/plain")

        def _reply(self, status: int, body: str, content_type: str) -> None:
            data = body.encode()
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:  # stdlib signature
            return

    return Handler


async def watch_consumer(event_log: Any, consumer: str, metrics: Metrics, *, interval: float = 5.0) -> None:
    """Poll the work consumer's info into the lag gauges until cancelled."""
    while True:
        with contextlib.suppress(Exception):
            info = await event_log.js.consumer_info(event_log.stream, consumer)
            metrics.consumer_state(
                consumer,
                pending=int(info.num_pending or 0),
                ack_pending=int(info.num_ack_pending or 0),
                redelivered=int(info.num_redelivered or 0),
                waiting=int(info.num_waiting or 0),
            )
        await asyncio.sleep(interval)


def refuse_taken_port(port: int, *, host: str = "0.0.0.0", whose: str = "") -> None:
    """Raise what :func:`exposed` would when ``port`` cannot be served (taken, or privileged), before
    anything starts: a command that fails there has said it runs. Port 0 (a free one) always can."""
    if port == 0:
        return
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as http.server binds it
        try:
            probe.bind((host, port))
        except OSError as exc:
            msg = f"cannot serve metrics on port {port}{whose}: {exc.strerror or exc}"
            raise EngineError(msg) from exc


@contextlib.asynccontextmanager
async def exposed(event_log: Any, consumer: str, port: int | None, *, host: str = "0.0.0.0"):
    """Serve metrics for the block's duration; yields the :class:`Metrics` (None when port is None)."""
    if port is None:
        yield None
        return
    metrics = Metrics()
    try:
        server = MetricsServer(metrics, host=host, port=port).start()
    except OSError as exc:  # taken, or a privileged port
        msg = f"cannot serve metrics on port {port}: {exc.strerror or exc}"
        raise EngineError(msg) from exc
    watcher = asyncio.create_task(watch_consumer(event_log, consumer, metrics))
    log.info("metrics_serving", port=server.port, path="/metrics")
    try:
        yield metrics
    finally:
        watcher.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await watcher
        server.stop()
