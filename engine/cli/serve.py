"""`apollo up` and `apollo worker`: the engine's processes, in the foreground."""

from __future__ import annotations

import argparse
from typing import Any

from engine.cli.problem_args import port, positive_int
from engine.config.settings import Settings
from engine.errors import EngineError
from engine.runtime.supervisor import serve, serve_worker


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
    workers = args.workers or settings.worker.workers
    if args.metrics_port is not None and args.metrics_port + workers - 1 > 65535:
        msg = (f"--metrics-port {args.metrics_port} with {workers} workers needs ports up to "
               f"{args.metrics_port + workers - 1}; the last is 65535")
        raise EngineError(msg)
    return await serve(settings, workers=workers, concurrency=args.concurrency, metrics_port=args.metrics_port)


async def _cmd_worker(args: argparse.Namespace, settings: Settings) -> int:
    return await serve_worker(settings, concurrency=args.concurrency, metrics_port=args.metrics_port)
