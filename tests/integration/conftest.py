"""Fixtures of the fault tests: a 3-node JetStream cluster on loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.nats.server import NatsServerProcess
from tests.support.cluster import cluster_nodes


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[list[NatsServerProcess]]:
    """Nodes ``node0..node2`` of cluster "apollo-test", started, each keeping its port on restart."""
    nodes = cluster_nodes(tmp_path)
    try:
        for node in nodes:
            node.start()
        yield nodes
    finally:
        for node in nodes:
            node.stop()
