"""NATS message headers parsed as nats-py parses them, at a fraction of the cost.

nats-py 2.16 tests each header name for whitespace with a generator over its
characters. Every delivery and every acknowledgement a worker receives carries headers:
``bench/headers.py`` times both on a worker's header blocks (1.6-2.6x cheaper here, at most
about 50 us of CPU per episode; docs/workers.md). :func:`parse_header_lines` gives the same dict for every input
(``tests/engine/test_header_lines.py`` compares the two on generated blocks) and
:func:`install` puts it in nats-py's place when the engine connects.
"""

from __future__ import annotations

from collections.abc import Callable

from nats.aio.client import Client

_WHITESPACE = bytes(code for code in range(128) if chr(code).isspace())
"""The ASCII characters ``str.isspace`` calls whitespace (the separators 0x1c-0x1f too)."""

_LIBRARY_PARSER: Callable[[bytes], dict[str, str]] | None = None
_found = Client.__dict__.get("_parse_header_lines")
if isinstance(_found, staticmethod):
    _LIBRARY_PARSER = _found.__func__


def parse_header_lines(raw: bytes) -> dict[str, str]:
    """``Name: Value`` lines to a dict: a line without a colon, or whose name is not
    ASCII or holds whitespace, is skipped; a value's bad UTF-8 becomes U+FFFD."""
    out: dict[str, str] = {}
    for line in raw.split(b"\r\n"):
        if not line:
            continue
        name, sep, value = line.partition(b":")
        if not sep:
            continue
        name = name.strip()
        if not name.isascii() or len(name.translate(None, _WHITESPACE)) != len(name):
            continue
        out[name.decode("ascii")] = value.strip().decode("utf-8", "replace")
    return out


def library_parser() -> Callable[[bytes], dict[str, str]] | None:
    """nats-py's own parser, when this nats-py has one of that shape (what tests compare with)."""
    return _LIBRARY_PARSER


def install() -> bool:
    """Use :func:`parse_header_lines` in nats-py's clients; whether it was installed.

    Only a nats-py whose parser has the shape this one mirrors is patched: another
    version keeps its own.
    """
    if _LIBRARY_PARSER is None:
        return False
    Client._parse_header_lines = staticmethod(parse_header_lines)  # type: ignore[method-assign]
    return True
