"""What a consumer's reply subject says about a message: its stream sequence, its
delivery count and how many are pending."""

from __future__ import annotations

from nats.aio.msg import Msg


def sequence_and_pending(msg: Msg) -> tuple[int, int]:
    """Stream sequence and pending count of a consumer's message (bulk reads, per event)."""
    seq, _, pending = _reply_fields(msg)
    return seq, pending


def sequence_and_deliveries(msg: Msg) -> tuple[int, int]:
    """Stream sequence and delivery count of a consumer's message (every delivery)."""
    seq, delivered, _ = _reply_fields(msg)
    return seq, delivered


def _reply_fields(msg: Msg) -> tuple[int, int, int]:
    """(stream sequence, deliveries, pending) from a JetStream reply subject.

    ``$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<time>.<pending>`` is split
    directly (nats-py's metadata object costs more than the rest of a delivery's
    bookkeeping); other layouts go through nats-py's parser.
    """
    tokens = (msg.reply or "").split(".")
    if len(tokens) == 9 and tokens[0] == "$JS" and tokens[1] == "ACK":
        return int(tokens[5]), int(tokens[4]), int(tokens[8])
    meta = msg.metadata
    return meta.sequence.stream, meta.num_delivered, meta.num_pending
