"""The reply subject of a consumer's message read as nats-py reads it: sequence, deliveries, pending.

Every delivery, follow and bulk read takes its stream sequence from here, so generated
subjects of both layouts the server sends are compared with nats-py's own metadata parser.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from nats.aio.msg import Msg
from nats.errors import NotJSMessageError

from engine.nats.jetstream.reply_subject import reply_fields

NAME = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_", min_size=1, max_size=20)
COUNT = st.integers(min_value=0, max_value=2**63 - 1)
SEQUENCE = st.integers(min_value=1, max_value=2**63 - 1)
NANOS = st.integers(min_value=0, max_value=4_102_444_800_000_000_000)  # up to the year 2100


def _message(reply: str) -> Msg:
    return Msg(_client=None, subject="apollo.run.r.problem.submitted", reply=reply)  # type: ignore[arg-type]


def _nats_py(reply: str) -> tuple[int, int, int]:
    meta = _message(reply).metadata
    return meta.sequence.stream, meta.num_delivered, meta.num_pending


@given(stream=NAME, consumer=NAME, delivered=SEQUENCE, sseq=SEQUENCE, cseq=SEQUENCE, nanos=NANOS, pending=COUNT)
def test_a_plain_ack_subject_reads_as_nats_py_reads_it(
    stream: str, consumer: str, delivered: int, sseq: int, cseq: int, nanos: int, pending: int
) -> None:
    """``$JS.ACK.<stream>.<consumer>.<delivered>.<sseq>.<cseq>.<time>.<pending>`` gives nats-py's figures."""
    reply = f"$JS.ACK.{stream}.{consumer}.{delivered}.{sseq}.{cseq}.{nanos}.{pending}"
    assert reply_fields(_message(reply)) == (sseq, delivered, pending) == _nats_py(reply)


@given(domain=NAME, account=NAME, stream=NAME, consumer=NAME, delivered=SEQUENCE, sseq=SEQUENCE, cseq=SEQUENCE,
       nanos=NANOS, pending=COUNT, token=NAME)
def test_an_ack_subject_with_a_domain_reads_as_nats_py_reads_it(
    domain: str, account: str, stream: str, consumer: str, delivered: int, sseq: int, cseq: int, nanos: int,
    pending: int, token: str,
) -> None:
    """The 12-token layout (domain, account hash, a random last token) gives nats-py's figures."""
    reply = f"$JS.ACK.{domain}.{account}.{stream}.{consumer}.{delivered}.{sseq}.{cseq}.{nanos}.{pending}.{token}"
    assert reply_fields(_message(reply)) == (sseq, delivered, pending) == _nats_py(reply)


@pytest.mark.parametrize(
    "reply",
    [
        "",
        "_INBOX.abc.1",
        "$JS.NAK.APOLLO.workers.1.2.3.4.5",  # right length, wrong verb
        "$JS.ACK.APOLLO.workers.1.2.3",  # too short
    ],
)
def test_a_reply_that_is_no_ack_subject_is_refused_as_nats_py_refuses_it(reply: str) -> None:
    """A reply that is not a JetStream acknowledgement subject raises nats-py's NotJSMessageError."""
    with pytest.raises(NotJSMessageError):
        reply_fields(_message(reply))
