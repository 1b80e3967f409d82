"""Stream, consumer and bucket set-up: apply the definitions, or only look them up."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

import nats.errors
import nats.js.errors
import structlog
from nats.js import JetStreamContext, api

from engine.errors import AccessDenied, StreamSetupError
from engine.nats.client_events import ClientEvents
from engine.nats.jetstream.connection import permitted
from engine.nats.streams import Definitions
from engine.nats.transient import retrying

_log = structlog.get_logger("apollo.eventlog")

HANDLED_BUCKET = "apollo-handled"
CHECKPOINT_BUCKET = "apollo-checkpoints"


@dataclass(frozen=True)
class Buckets:
    """The KV buckets and Object Store the log keeps beside its stream (nats-py handles)."""

    handled: Any
    checkpoints: Any
    payloads: Any


async def bind(js: JetStreamContext, definitions: Definitions) -> Buckets:
    """Look up the stream and buckets the engine created; change nothing."""
    buckets = definitions.buckets
    try:
        await js.stream_info(definitions.stream["name"])
        return Buckets(
            handled=await js.key_value(HANDLED_BUCKET),
            checkpoints=await js.key_value(CHECKPOINT_BUCKET),
            payloads=await js.object_store(buckets["object_store"][0]["bucket"]),
        )
    except nats.js.errors.NotFoundError as exc:
        msg = (
            f"stream {definitions.stream['name']} or one of its buckets does not exist on this NATS server: "
            "start the engine (`apollo up`) or run `apollo streams ensure`"
        )
        raise StreamSetupError(msg) from exc


async def ensure(
    js: JetStreamContext, definitions: Definitions, replicas: int | None, ack_wait: float | None = None
) -> Buckets:
    """Create or update the stream, its consumers and buckets as the definitions say."""
    try:
        config = definitions.stream_config(replicas=replicas)
        try:
            existing = await js.stream_info(config.name)
            if replicas is None:  # never shrink a replicated stream (or its buckets) by omission
                replicas = config.num_replicas = existing.config.num_replicas
            await js.update_stream(config)
        except nats.js.errors.NotFoundError:
            await js.add_stream(config)
        for spec in definitions.consumers:
            consumer = definitions.consumer_config(spec["durable_name"])
            if ack_wait:
                consumer.ack_wait = ack_wait
            await js.add_consumer(config.name, consumer)
        buckets = definitions.buckets
        kv_specs = {b["bucket"]: b for b in buckets.get("key_value", [])}
        handled = await _kv(js, kv_specs[HANDLED_BUCKET], replicas)
        checkpoints = await _kv(js, kv_specs[CHECKPOINT_BUCKET], replicas)
        store = buckets["object_store"][0]
        payloads = await js.create_object_store(
            store["bucket"],
            config=api.ObjectStoreConfig(
                bucket=store["bucket"], description=store.get("description"),
                replicas=replicas or 1, storage=api.StorageType.FILE,
            )
        )
    except (nats.errors.Error, nats.js.errors.Error, KeyError) as exc:
        msg = f"cannot apply stream definitions: {exc}"
        raise StreamSetupError(msg) from exc
    return Buckets(handled=handled, checkpoints=checkpoints, payloads=payloads)


async def _kv(js: JetStreamContext, spec: dict[str, Any], replicas: int | None) -> Any:
    return await js.create_key_value(
        config=api.KeyValueConfig(
            bucket=spec["bucket"],
            description=spec.get("description"),
            history=spec.get("history", 1),
            ttl=float(spec["ttl_seconds"]) if spec.get("ttl_seconds") else None,
            storage=api.StorageType.FILE,
            replicas=replicas or 1,
        )
    )


_KV_KEY = re.compile(r"[-_=.0-9A-Za-z]+")


def kv_key(key: str) -> str:
    """KV keys allow [-/_=.a-zA-Z0-9]; hash anything else."""
    if len(key) < 200 and _KV_KEY.fullmatch(key):
        return key
    return hashlib.sha256(key.encode()).hexdigest()


async def open_buckets(
    js: JetStreamContext,
    definitions: Definitions,
    client_events: ClientEvents,
    *,
    manage_streams: bool,
    must_manage_streams: bool,
    replicas: int | None,
    ack_wait: float | None,
    retry_for: float,
) -> Buckets:
    """Apply the definitions (``manage_streams``) or only look them up, through failovers.

    A role the server does not let manage them leaves them to the admin, unless
    ``must_manage_streams``, where that refusal is the error.
    """
    if manage_streams:
        try:
            return await permitted(client_events, retrying(
                lambda: ensure(js, definitions, replicas, ack_wait), doing="apply stream definitions", within=retry_for
            ))
        except AccessDenied as exc:  # a worker role: an admin applies the definitions
            if must_manage_streams:
                msg = f"applying the stream definitions needs the admin role: {exc}"
                raise AccessDenied(msg) from None
            _log.info("stream_definitions_left_to_admin", reason=str(exc))
    return await permitted(client_events, retrying(
        lambda: bind(js, definitions), doing=f"open stream {definitions.stream['name']}", within=retry_for
    ))
