"""JSON encoding and tolerant decoding of events."""

from __future__ import annotations

from typing import Any, Final, NamedTuple

import msgspec

from events.base import SCHEMA_VERSION, Event
from events.catalog import EVENT_TYPES, TYPES_BY_TAG, any_event_type
from events.errors import EventError
from events.free_form import nests_freely
from events.upcast import upcast
from events.wire_form import RESTORED_ON_READ, from_wire, to_wire

MAX_DEPTH: Final = 64
"""Deepest nesting of arrays and objects accepted. Real events nest a handful of levels. A
deeper body is refused before the plain-JSON parser recurses into it, and after a typed
decode when its type has free-form fields, so no reader ever prints one. In a type whose
schema fixes every depth, a deeper value in an unknown field is dropped like any unknown
field (msgspec skips it under its own recursion guard)."""
MAX_BYTES: Final = 64 * 1024 * 1024
"""Largest body decoded at all; the worker's own limit (``max_event_bytes``) is lower."""


class DecodeError(ValueError, EventError):
    """Bytes that are not a valid event of a known type (malformed JSON, missing fields...)."""


class UnknownEvent(msgspec.Struct, frozen=True):
    """A well-formed message whose tag this version does not know; skipped, never fatal."""

    tag: str
    raw: dict[str, Any]

    @property
    def run_id(self) -> str | None:
        value = self.raw.get("run_id")
        return value if isinstance(value, str) else None

    @property
    def event_id(self) -> str | None:
        value = self.raw.get("event_id")
        return value if isinstance(value, str) else None


_encoder = msgspec.json.Encoder()
_raw_decoder = msgspec.json.Decoder(dict[str, Any])


def encode(event: Event) -> bytes:
    """Encode one event as JSON bytes (stable field order, ``type`` first), in its wire form
    (:mod:`events.wire_form`: prompts recorded by their changes)."""
    return _encoder.encode(to_wire(event))


def to_builtins(event: Event) -> dict[str, Any]:
    """The event as plain JSON-compatible Python data."""
    return msgspec.to_builtins(event)


class _TypedReader(NamedTuple):
    """What the fast path needs, built once per catalog size (new types may be registered)."""

    size: int
    decoder: msgspec.json.Decoder[Any]
    """Straight into the tagged union of every known type."""
    free_form: frozenset[type]
    """Types with a field of any depth (:mod:`events.free_form`): their depth is checked."""
    special: frozenset[type]
    """``free_form`` and the types :func:`from_wire` may change: every other type is done
    once decoded."""


_typed: _TypedReader | None = None


def _typed_reader() -> _TypedReader:
    global _typed  # a cache keyed on the catalog's size
    if _typed is None or _typed.size != len(EVENT_TYPES):
        free_form = frozenset(t for t in EVENT_TYPES if nests_freely(t))
        _typed = _TypedReader(len(EVENT_TYPES), msgspec.json.Decoder(any_event_type()), free_form,
                              free_form | RESTORED_ON_READ)
    return _typed


def decode(data: bytes | str, *, max_bytes: int = MAX_BYTES) -> Event | UnknownEvent:
    """Decode JSON bytes into a typed event.

    The size is checked first. The fast path decodes straight into the union; anything
    unusual (unknown tag, an older schema version to upcast, invalid data, a free-form field
    nested too deep) takes the tolerant path, which checks the depth before parsing and
    explains what is wrong.

    The depth is checked after the typed decode, and only for types with free-form fields:
    in any other type a deeper value cannot reach a reader (:mod:`events.free_form`), and
    scanning every body's bytes first cost as much as decoding it. Every reader of the log
    decodes each event through here, so the common case (a current event of a fixed-depth
    type) returns after one decode and two checks.

    Raises:
        DecodeError: the bytes are too big, nested too deep, not JSON, not an object, have
            no ``type``, or do not match the schema of their (known) type. Any other failure
            while decoding (a recursion or memory error, a bad encoding) is reported as a
            DecodeError too: one bad message is never the failure of whatever reads it.
    """
    try:
        if type(data) is not bytes or len(data) > max_bytes:
            data = _bounded(data, max_bytes)  # converts, or refuses with the reason
        reader = _typed if _typed is not None and _typed.size == len(EVENT_TYPES) else _typed_reader()
        try:
            event = reader.decoder.decode(data)
        except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
            event = None  # not valid for the union: the tolerant path reads it or says why
        if event is not None and event.schema_version == SCHEMA_VERSION:
            if type(event) not in reader.special:
                return event
            if not (type(event) in reader.free_form and _nested_deeper_than(data, MAX_DEPTH)):
                return from_wire(event)
        # An older schema version, an unknown tag, invalid data, or a free-form field nested
        # deeper than the limit: the tolerant path upcasts, reads or refuses it, naming why.
        return _tolerant(_bounded(data, max_bytes))
    except DecodeError:
        raise
    except Exception as exc:  # whatever the bytes provoke, they are just undecodable
        raise DecodeError(_failure(exc)) from exc


def _tolerant(data: bytes) -> Event | UnknownEvent:
    """Decode through plain JSON: an unknown tag, an older schema upcast, or the reason it fails."""
    try:
        raw = _raw_decoder.decode(data)
    except msgspec.DecodeError as exc:
        msg = f"not a JSON object: {exc}"
        raise DecodeError(msg) from exc
    return from_builtins(raw)


def from_builtins(raw: dict[str, Any]) -> Event | UnknownEvent:
    """Convert a decoded JSON object into a typed event (after upcasting).

    Raises:
        DecodeError: ``raw`` is not an event of a known type; as with :func:`decode`, any
            failure while converting it is reported this way.
    """
    try:
        return _from_builtins(raw)
    except DecodeError:
        raise
    except Exception as exc:  # see decode
        raise DecodeError(_failure(exc)) from exc


def _from_builtins(raw: dict[str, Any]) -> Event | UnknownEvent:
    if not isinstance(raw, dict):
        msg = f"not a JSON object: {type(raw).__name__}"
        raise DecodeError(msg)
    tag = raw.get("type")
    if not isinstance(tag, str):
        msg = "event has no string 'type' field"
        raise DecodeError(msg)
    event_type = TYPES_BY_TAG.get(tag)
    if event_type is None:
        return UnknownEvent(tag=tag, raw=raw)
    raw = upcast(tag, raw)
    try:
        return from_wire(msgspec.convert(raw, event_type, strict=False))
    except msgspec.ValidationError as exc:
        msg = f"invalid {tag!r} event: {exc}"
        raise DecodeError(msg) from exc


def _bounded(data: bytes | str, max_bytes: int) -> bytes:
    """``data`` as bytes, once it is known to be small and shallow enough to parse."""
    if isinstance(data, str):
        data = data.encode("utf-8")  # lone surrogates raise here: undecodable
    elif not isinstance(data, bytes):
        data = bytes(data)
    if len(data) > max_bytes:
        msg = f"event of {len(data)} bytes exceeds the limit of {max_bytes}"
        raise DecodeError(msg)
    if _nested_deeper_than(data, MAX_DEPTH):
        msg = f"nested deeper than {MAX_DEPTH} levels"
        raise DecodeError(msg)
    return data


_NOT_STRUCTURE = bytes(b for b in range(256) if b not in b'[]{}"\\')
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")


def _brackets_outside_strings(data: bytes) -> bytes:
    """The brackets of ``data`` that are not inside JSON strings, in order.

    Only brackets, quotes and backslashes matter; the rest goes in one C-speed pass. A
    quote is escaped only right after a backslash: when the original has such a pair,
    escapes are dropped first (they are two bytes read left to right, as ``bytes.replace``
    scans, so dropping ``\\\\`` and then ``\\"`` leaves only the quotes that open and
    close strings). Then every other piece between quotes is outside a string. Up to the
    first byte that is not JSON (where any parser stops) this is what a parser nests.
    """
    structure = data.translate(None, _NOT_STRUCTURE)
    if b'\\"' in structure and b'\\"' in data:  # the first test is cheap and usually settles it
        data = data.replace(b"\\\\", b"").replace(b'\\"', b"")
        structure = data.translate(None, _NOT_STRUCTURE)
    return b"".join(structure.split(b'"')[0::2]).translate(None, _NOT_BRACKETS)


def _openers(data: bytes) -> int:
    """How many ``[`` and ``{`` bytes ``data`` holds (one C pass; two ``count`` calls take longer)."""
    return len(data) - len(data.translate(None, b"[{"))


def _nested_deeper_than(data: bytes, limit: int) -> bool:
    """Whether arrays/objects in ``data`` nest more than ``limit`` levels, without parsing.

    Fewer openers than the limit settle it at once (most events). Otherwise only the
    brackets outside strings are kept (one kind: a mismatch is the parser's to report) and
    the innermost pairs are removed once per level: whatever is left after ``limit`` rounds
    nests deeper. Every step is a C-speed bytes operation.
    """
    if _openers(data) <= limit:
        return False
    brackets = _brackets_outside_strings(data).replace(b"{", b"[").replace(b"}", b"]")
    for _ in range(limit):
        if not brackets:
            return False
        inner_removed = brackets.replace(b"[]", b"")
        if len(inner_removed) == len(brackets):
            # Unbalanced: what is left never closes; as many openers could nest that deep.
            return brackets.count(b"[") > limit
        brackets = inner_removed
    return bool(brackets)


def _failure(exc: BaseException) -> str:
    """One line naming what went wrong while decoding."""
    detail = str(exc).splitlines()[0][:200] if str(exc) else ""
    return f"undecodable ({type(exc).__name__}{': ' + detail if detail else ''})"
