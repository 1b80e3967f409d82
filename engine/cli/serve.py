"""`apollo up` and `apollo worker`: the engine's processes, in the foreground."""

from __future__ import annotations

import argparse
from typing import Any

from engine.app.supervisor import serve, serve_worker
from engine.cli.problem_args import port, positive_int
from engine.config.settings import Settings, default_data_dir
from engine.errors import EngineError
from engine.runtime.engine_state import STATE_FILE, live_engine_url, read_state


def register(subparsers: Any) -> None:
    up = subparsers.add_parser("up", help="start the engine's workers (and an embedded nats-server) in the foreground")
    up.add_argument("--workers", type=positive_int, default=None, help="worker processes (default 1)")
    up.add_argument("--concurrency", type=positive_int, default=None, help="events in flight per worker")
    up.add_argument("--metrics-port", type=port, default=None,
                    help="serve Prometheus metrics on this port (children use the next ones)")
    up.set_defaults(handler=_cmd_up)

    worker = subparsers.add_parser("worker", help="one worker process joining a running engine (any host)")
    worker.add_argument("--concurrency", type=positive_int, default=None)
    worker.add_argument("--metrics-port", type=port, default=None)
    worker.set_defaults(handler=_cmd_worker)


async def _cmd_up(args: argparse.Namespace, settings: Settings) -> int:
    _refuse_a_second_engine(settings)
    workers = args.workers or settings.worker.workers
    if args.metrics_port is not None and args.metrics_port + workers - 1 > 65535:
        msg = (f"--metrics-port {args.metrics_port} with {workers} workers needs ports up to "
               f"{args.metrics_port + workers - 1}; the last is 65535")
        raise EngineError(msg)
    return await serve(settings, workers=workers, concurrency=args.concurrency, metrics_port=args.metrics_port)


def _refuse_a_second_engine(settings: Settings) -> None:
    """One `apollo up` per data dir: a second would join the first's server unannounced and
    run a second projector over it. More workers are `apollo worker`'s job."""
    if settings.nats.url:
        return  # an explicit NATS (a cluster): several engines may share it
    data_dir = default_data_dir(settings)
    url = live_engine_url(data_dir)
    state = read_state(data_dir) if url else None
    if url is None or state is None:
        return
    msg = (f"an engine is already running on this data dir: NATS at {url}, `apollo up` pid {state.owner_pid}, "
           f"state file {data_dir / STATE_FILE}; add workers to it with `apollo worker`, or stop it first "
           "(APOLLO_DATA_DIR=DIR runs a separate engine)")
    raise EngineError(msg)


async def _cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    return await serve_worker(settings, concurrency=args.concurrency, metrics_port=args.metrics_port)
