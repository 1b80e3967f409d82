"""What a consumer's reply subject says about a message: its stream sequence, its
delivery count and how many are pending."""

from __future__ import annotations

from nats.aio.msg import Msg


def reply_fields(msg: Msg) -> tuple[int, int, int]:
    """(stream sequence, deliveries, pending) of a consumer's message (every delivery and
    every event of a bulk read goes through here, so callers unpack what they need).

    ``$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<time>.<pending>`` is split
    directly (nats-py's metadata object costs more than the rest of a delivery's
    bookkeeping); other layouts go through nats-py's parser.
    """
    tokens = (msg.reply or "").split(".")
    if len(tokens) == 9 and tokens[0] == "$JS" and tokens[1] == "ACK":
        return int(tokens[5]), int(tokens[4]), int(tokens[8])
    meta = msg.metadata
    return meta.sequence.stream, meta.num_delivered, meta.num_pending
