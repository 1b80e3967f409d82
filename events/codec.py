"""JSON encoding and tolerant decoding of events."""

from __future__ import annotations

from typing import Any

import msgspec

from events.base import SCHEMA_VERSION, Event
from events.catalog import EVENT_TYPES, TYPES_BY_TAG, any_event_type
from events.upcast import upcast


class DecodeError(ValueError):
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
    """Encode one event as JSON bytes (stable field order, ``type`` first)."""
    return _encoder.encode(event)


def to_builtins(event: Event) -> dict[str, Any]:
    """The event as plain JSON-compatible Python data."""
    return msgspec.to_builtins(event)


_typed: tuple[int, msgspec.json.Decoder[Any]] | None = None


def _typed_decoder() -> msgspec.json.Decoder[Any]:
    """A decoder straight into the tagged union, rebuilt when new types are registered."""
    global _typed  # noqa: PLW0603 - a cache keyed on the catalog's size
    if _typed is None or _typed[0] != len(EVENT_TYPES):
        _typed = (len(EVENT_TYPES), msgspec.json.Decoder(any_event_type()))
    return _typed[1]


def decode(data: bytes | str) -> Event | UnknownEvent:
    """Decode JSON bytes into a typed event.

    The fast path decodes straight into the union; anything unusual (unknown tag, an
    older schema version to upcast, invalid data) takes the tolerant path that explains.

    Raises:
        DecodeError: the bytes are not JSON, not an object, have no ``type``, or do not
            match the schema of their (known) type.
    """
    try:
        event = _typed_decoder().decode(data)
    except (msgspec.DecodeError, msgspec.ValidationError):
        pass
    else:
        if event.schema_version == SCHEMA_VERSION:
            return event
    try:
        raw = _raw_decoder.decode(data)
    except msgspec.DecodeError as exc:
        msg = f"not a JSON object: {exc}"
        raise DecodeError(msg) from exc
    return from_builtins(raw)


def from_builtins(raw: dict[str, Any]) -> Event | UnknownEvent:
    """Convert a decoded JSON object into a typed event (after upcasting)."""
    tag = raw.get("type")
    if not isinstance(tag, str):
        msg = "event has no string 'type' field"
        raise DecodeError(msg)
    event_type = TYPES_BY_TAG.get(tag)
    if event_type is None:
        return UnknownEvent(tag=tag, raw=raw)
    raw = upcast(tag, raw)
    try:
        return msgspec.convert(raw, event_type, strict=False)
    except msgspec.ValidationError as exc:
        msg = f"invalid {tag!r} event: {exc}"
        raise DecodeError(msg) from exc
