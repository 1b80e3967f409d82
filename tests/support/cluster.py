"""A 3-node JetStream cluster on loopback for fault tests: free ports, own store dirs, routes."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine.nats.jetstream import JetStreamEventLog
from engine.nats.server import NatsServerProcess, free_port


def cluster_nodes(folder: Path, size: int = 3) -> list[NatsServerProcess]:
    """Nodes ``node0..`` of cluster "apollo-test" (not started); each keeps its port on restart."""
    routes = [free_port() for _ in range(size)]
    route_urls = ",".join(f"nats://127.0.0.1:{port}" for port in routes)
    return [
        NatsServerProcess(
            store_dir=folder / f"node{index}",
            port=free_port(),
            extra_args=["--server_name", f"node{index}", "--cluster_name", "apollo-test",
                        "--cluster", f"nats://127.0.0.1:{routes[index]}", "--routes", route_urls],
        )
        for index in range(size)
    ]


def cluster_url(nodes: list[NatsServerProcess]) -> str:
    """Every node's client URL, comma separated (clients fail over between them)."""
    return ",".join(node.url for node in nodes)


async def connect_when_ready(url: str, timeout: float = 60.0, **options: object) -> JetStreamEventLog:
    """Apply the definitions with 3 replicas once the cluster has elected a meta leader."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        try:
            return await JetStreamEventLog.connect(url, replicas=3, **options)  # type: ignore[arg-type]
        except Exception:
            if asyncio.get_running_loop().time() > deadline:
                raise
            await asyncio.sleep(0.5)


def node_named(nodes: list[NatsServerProcess], name: str | None) -> NatsServerProcess:
    """The node whose server name is ``name`` (as a stream's cluster info reports it)."""
    [node] = [node for index, node in enumerate(nodes) if f"node{index}" == name]
    return node
