"""The JetStream event log, split like nats.py's ``js`` package: one module per port.

| module | job |
|---|---|
| ``log`` | :class:`JetStreamEventLog`: connects and hands each call to its port |
| ``event_store`` | appends, run and bulk reads, leader reads (the ``EventStore`` port) |
| ``follow`` | following a run as it is recorded, on an ordered push consumer |
| ``direct_get`` | batched direct gets on one shared reply inbox |
| ``work_queue`` | the durable work consumer as deliveries (``WorkSource``) |
| ``marks`` | which handler finished which event (``HandledMarks``) |
| ``checkpoints`` | projection checkpoints (``CheckpointStore``) |
| ``payloads`` | big bodies in the Object Store |
| ``setup`` | applying or looking up the stream, consumers and buckets |
| ``connection`` | connecting: a bounded first connect, refusals in one line, server checks |
| ``errors`` | wire errors as the engine's: what is the bus's failure, what is gone for good |
| ``reply_subject`` | a consumer message's sequence, deliveries and pending count |
"""

from engine.nats.jetstream.connection import (
    DEFAULT_CONNECT_TIMEOUT_S,
    connect_client,
    connect_failure_reason,
    connection_encrypted,
    permitted,
)
from engine.nats.jetstream.errors import DUPLICATE_IN_PROCESS, MISSING_PAYLOAD, WRONG_LAST_SEQUENCE, LaggingReplica
from engine.nats.jetstream.event_store import (
    DUPLICATE_IN_PROCESS_WAITS,
    EXPECTED_SEQ,
    EXPECTED_SEQ_SUBJECT,
    JetStreamEventStore,
)
from engine.nats.jetstream.log import JetStreamEventLog
from engine.nats.jetstream.payloads import PAYLOAD_HEADER
from engine.nats.jetstream.setup import HANDLED_BUCKET
from engine.nats.jetstream.work_queue import JetStreamWorkQueue

__all__ = [
    "DEFAULT_CONNECT_TIMEOUT_S",
    "DUPLICATE_IN_PROCESS",
    "DUPLICATE_IN_PROCESS_WAITS",
    "EXPECTED_SEQ",
    "EXPECTED_SEQ_SUBJECT",
    "HANDLED_BUCKET",
    "MISSING_PAYLOAD",
    "PAYLOAD_HEADER",
    "WRONG_LAST_SEQUENCE",
    "JetStreamEventLog",
    "JetStreamEventStore",
    "JetStreamWorkQueue",
    "LaggingReplica",
    "connect_client",
    "connect_failure_reason",
    "connection_encrypted",
    "permitted",
]
