"""Stream, consumer and bucket definitions: read from the package (``deploy/streams`` links there)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nats.js import api

from engine.errors import StreamSetupError
from events.base import tag_of
from events.subjects import type_filter
from handlers.routes import ROUTES
from handlers.routing import delivered_types

DEFAULT_DEFINITIONS = Path(__file__).resolve().parent / "stream_definitions"
"""Package data, so installed copies of the engine find them too (not only editable ones)."""


DELIVERED_TYPES = "delivered types"
"""A consumer's ``filter_subjects`` computed from the route table (:func:`delivered_subjects`)."""


def delivered_subjects() -> list[str]:
    """One filter subject per event type a worker needs delivered: those an effect reacts
    to, and submissions (``handlers.routing.delivered_types``). The decisions below them
    are taken by the worker that records their causes, so their events are not delivered."""
    return sorted(type_filter(tag_of(event_type)) for event_type in delivered_types(ROUTES))


@dataclass(frozen=True)
class Definitions:
    """The parsed definitions; ``stream`` and ``consumers`` map onto nats-py configs."""

    stream: dict[str, Any]
    consumers: list[dict[str, Any]]
    buckets: dict[str, Any]

    @classmethod
    def load(cls, directory: Path | None = None) -> Definitions:
        folder = directory or DEFAULT_DEFINITIONS
        try:
            stream = json.loads((folder / "apollo.json").read_text())
            consumers = json.loads((folder / "consumers.json").read_text())
            buckets = json.loads((folder / "buckets.json").read_text())
        except (OSError, ValueError) as exc:
            msg = f"cannot read stream definitions in {folder}: {exc}"
            raise StreamSetupError(msg) from exc
        return cls(stream, consumers, buckets)

    def stream_config(self, *, replicas: int | None = None) -> api.StreamConfig:
        spec = self.stream
        return api.StreamConfig(
            name=spec["name"],
            description=spec.get("description"),
            subjects=spec["subjects"],
            retention=api.RetentionPolicy(spec.get("retention", "limits")),
            storage=api.StorageType(spec.get("storage", "file")),
            discard=api.DiscardPolicy(spec.get("discard", "old")),
            duplicate_window=float(spec.get("duplicate_window_seconds", 120)),
            max_bytes=spec.get("max_bytes", -1),
            max_age=float(spec.get("max_age_seconds", 0)),
            max_msg_size=spec.get("max_msg_size", -1),
            allow_direct=spec.get("allow_direct", True),
            # s2: the server compresses each message block once it is full. A run's texts
            # recur in its events (a reply in model.responded, the next prompt's delta and
            # trajectory.sealed), so on disk they cost about once (docs/replay.md).
            compression=api.StoreCompression(spec.get("compression", "none")),
            num_replicas=replicas or spec.get("num_replicas", 1),
        )

    def consumer_config(self, durable: str) -> api.ConsumerConfig:
        for spec in self.consumers:
            if spec["durable_name"] == durable:
                return _consumer_config(spec)
        msg = f"no consumer named {durable!r} in the definitions"
        raise StreamSetupError(msg)


def _consumer_config(spec: dict[str, Any]) -> api.ConsumerConfig:
    filters = spec.get("filter_subjects")
    if filters == DELIVERED_TYPES:
        filters = delivered_subjects()
    return api.ConsumerConfig(
        durable_name=spec["durable_name"],
        name=spec["durable_name"],
        description=spec.get("description"),
        filter_subject=None if filters else spec.get("filter_subject"),
        filter_subjects=filters or None,
        ack_policy=api.AckPolicy(spec.get("ack_policy", "explicit")),
        ack_wait=float(spec.get("ack_wait_seconds", 30)),
        max_deliver=spec.get("max_deliver", -1),
        max_ack_pending=spec.get("max_ack_pending", 1000),
        deliver_policy=api.DeliverPolicy(spec.get("deliver_policy", "all")),
    )
