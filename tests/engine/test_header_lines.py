"""The engine's NATS header parser gives nats-py's own result for every header block."""

from __future__ import annotations

import nats
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.nats import header_lines

LIBRARY = header_lines.library_parser()

pytestmark = pytest.mark.skipif(LIBRARY is None, reason="this nats-py has no parser of the mirrored shape")

_TRICKY = [b" ", b"\t", b"\x0b", b"\x0c", b"\x1c", b"\x1f", b"\r", b"\n", b"\r\n", b":", b": ",
           b"\xc3\xa9", b"\xff", b"\x00", b"Nats-Msg-Id", b"Status", b"abc", b"1"]
_pieces = st.one_of(st.sampled_from(_TRICKY), st.binary(max_size=6))
_lines = st.lists(_pieces, max_size=8).map(b"".join)
_blocks = st.lists(_lines, max_size=6).map(b"\r\n".join)


@settings(max_examples=3000, deadline=None)
@given(_blocks)
def test_any_header_block_parses_as_nats_py_parses_it(raw: bytes) -> None:
    """Generated blocks (whitespace, separators, bad UTF-8, stray colons and line ends) parse identically."""
    assert header_lines.parse_header_lines(raw) == LIBRARY(raw)


@pytest.mark.parametrize("raw", [
    b"Nats-Msg-Id: a1\r\nNats-Expected-Last-Subject-Sequence: 7\r\n\r\n",
    b"Bad Name: x\r\nGood:y\r\n",
    b"Sep\x1cName: x\r\n",
    b"Caf\xc3\xa9: x\r\nValue: caf\xc3\xa9 \xff\r\n",
    b": empty name\r\nno colon here\r\n",
])
def test_the_headers_jetstream_sends_parse_as_nats_py_parses_them(raw: bytes) -> None:
    """The shapes a worker receives, and named odd ones, give nats-py's dict."""
    assert header_lines.parse_header_lines(raw) == LIBRARY(raw)


async def test_an_installed_parser_reads_the_headers_a_real_server_delivers(nats_server) -> None:
    """With the parser installed, headers sent through a real server arrive whole."""
    assert header_lines.install()
    nc = await nats.connect(nats_server.url)
    try:
        sub = await nc.subscribe("hdr.test")
        await nc.publish("hdr.test", b"x", headers={"Nats-Msg-Id": "m-1", "Apollo-Note": "café"})
        msg = await sub.next_msg(timeout=5)
    finally:
        await nc.close()
    assert msg.headers == {"Nats-Msg-Id": "m-1", "Apollo-Note": "café"}
