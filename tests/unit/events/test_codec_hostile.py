"""Property tests: whatever bytes arrive, decoding gives an event or a DecodeError, never anything else.

Random nesting, sizes, encodings and plain noise (issue 26 A: 5000 nested arrays raised
RecursionError out of ``decode`` and failed a worker's whole pull batch).
"""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.eventlog.memory import InMemoryEventLog
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.testing.event_builders import submitted
from events import (
    EVENT_TYPES,
    DecodeError,
    EventRejected,
    ProblemSubmitted,
    RunStarted,
    UnknownEvent,
    decode,
    encode,
    tag_of,
)
from events.base import Event
from events.codec import MAX_DEPTH
from events.free_form import nests_freely
from handlers.context import Services
from tests.engine.test_dispatcher import routes
from tests.support.event_strategies import WIRE_ONLY, register_event_strategies

SKELETON = json.loads(encode(submitted("prop")))
"""A valid submission to hide hostile values in."""
TRICKY_TEXT = st.text(alphabet='[]{}"\\\n\u00e9\U0001f600ab:,', max_size=40)
"""Brackets, quotes and backslashes inside strings must never count as nesting."""
JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | TRICKY_TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TRICKY_TEXT, inner, max_size=3),
    max_leaves=30,
)
SKELETON_TIME = datetime(2026, 1, 1, tzinfo=UTC)
register_event_strategies()
ENCODINGS = ("utf-8", "utf-16", "utf-32", "latin-1", "cp1252", "utf-8-sig")


def _depth(value: Any) -> int:
    """Levels of arrays/objects in ``value`` (a scalar has none)."""
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    return 0


def _nest(depth: int, kinds: list[bool]) -> str:
    """``depth`` levels, each an array or an object (by ``kinds``, cycled), around a 1."""
    opens, closes = [], []
    for level in range(depth):
        as_array = kinds[level % len(kinds)]
        opens.append("[" if as_array else '{"k":')
        closes.append("]" if as_array else "}")
    return "".join(opens) + "1" + "".join(reversed(closes))


def _decodes_or_refuses(data: bytes | str) -> Any:
    try:
        return decode(data)
    except DecodeError as exc:
        return exc


@settings(max_examples=150, deadline=None)
@given(value=JSON_VALUES)
def test_metadata_decodes_exactly_when_it_nests_within_the_limit(value: Any) -> None:
    """Any JSON value as metadata: the event decodes unchanged iff it nests within MAX_DEPTH, else it is refused."""
    body = json.dumps({**SKELETON, "metadata": {"v": value}})
    result = _decodes_or_refuses(body.encode())
    if 2 + _depth(value) <= MAX_DEPTH:  # the event object and the metadata object are two levels
        assert isinstance(result, ProblemSubmitted) and result.metadata == {"v": value}
    else:
        assert isinstance(result, DecodeError) and "nested deeper" in str(result)


@settings(max_examples=60, deadline=None)
@given(depth=st.integers(0, 6000), kinds=st.lists(st.booleans(), min_size=1, max_size=4),
       closed=st.booleans())
def test_any_nesting_depth_is_a_decode_or_a_refusal(depth: int, kinds: list[bool], closed: bool) -> None:
    """Arrays and objects nested up to 6000 deep (closed or cut off) never raise past decode."""
    nest = _nest(depth, kinds)
    body = json.dumps({**SKELETON, "metadata": {"k": "NEST"}}).replace('"NEST"', nest)
    if not closed:
        body = body[: len(body) // 2]
    result = _decodes_or_refuses(body.encode())
    if closed and depth + 2 <= MAX_DEPTH:
        assert not isinstance(result, DecodeError), result
    if depth + 2 > MAX_DEPTH and closed:
        assert isinstance(result, DecodeError) and "nested deeper" in str(result)


@settings(max_examples=100, deadline=None)
@given(text=st.text(max_size=200), encoding=st.sampled_from(ENCODINGS))
def test_events_in_any_encoding_are_a_decode_or_a_refusal(text: str, encoding: str) -> None:
    """A valid event re-encoded as UTF-16, Latin-1... (and text with lone surrogates) never raises past decode."""
    body = json.dumps({**SKELETON, "question": text}, ensure_ascii=False)
    raw = body.encode(encoding, errors="surrogatepass" if encoding.startswith("utf") else "replace")
    result = _decodes_or_refuses(raw)
    if encoding in ("utf-8",) and not any(0xD800 <= ord(c) <= 0xDFFF for c in text):
        assert isinstance(result, ProblemSubmitted) and result.question == text
    _decodes_or_refuses(body)  # as str too: lone surrogates cannot even be encoded


@settings(max_examples=150, deadline=None)
@given(data=st.binary(max_size=2000))
def test_random_bytes_are_a_decode_or_a_refusal(data: bytes) -> None:
    """Noise is refused with a DecodeError (or is, by chance, an event)."""
    result = _decodes_or_refuses(data)
    assert isinstance(result, (DecodeError, UnknownEvent, Event))


def test_a_body_over_the_size_limit_is_refused_before_parsing() -> None:
    """The size bound applies first, whatever the body is."""
    result = _decodes_or_refuses(encode(submitted("big", question="x" * 5000)))
    assert isinstance(result, ProblemSubmitted)
    refused = _decodes_or_refuses(b"[" * 5000)
    assert isinstance(refused, DecodeError)
    try:
        decode(encode(submitted("big", question="x" * 5000)), max_bytes=1000)
    except DecodeError as exc:
        assert "exceeds the limit of 1000" in str(exc)
    else:
        raise AssertionError("a body over max_bytes decoded")


HOSTILE = st.one_of(
    st.binary(max_size=300),
    st.builds(lambda d, k: ('{"type":"problem.submitted","metadata":' + _nest(d, k) + "}").encode(),
              st.integers(0, 5000), st.lists(st.booleans(), min_size=1, max_size=3)),
    st.builds(lambda t, e: json.dumps({**SKELETON, "question": t}, ensure_ascii=False).encode(e, "replace"),
              st.text(max_size=50), st.sampled_from(ENCODINGS)),
)


@settings(max_examples=25, deadline=None)
@given(payloads=st.lists(HOSTILE, min_size=1, max_size=8))
def test_no_payload_escapes_a_batch(payloads: list[bytes]) -> None:
    """One pull batch of hostile payloads plus a submission: every message is settled, the submission starts."""

    async def scenario() -> None:
        log = InMemoryEventLog()
        for index, payload in enumerate(payloads):
            await log.append_raw(f"apollo.run.h-{index}.problem.submitted", payload)
        await log.append(submitted("amid"))
        dispatcher = Dispatcher(log, routes(), Services(), DispatcherSettings(pull_timeout=0.05, backoff_base=0.0))
        batch = await (await log.work_queue("apollo-workers")).pull(len(payloads) + 1, 0.1)
        assert len(batch) == len(payloads) + 1
        for delivery in batch:
            await dispatcher.handle(delivery)  # raising here is the failure this test exists for
        assert [type(r.event) for r in await log.read_run("amid")] == [ProblemSubmitted, RunStarted]
        for index, delivery in enumerate(batch[:-1]):
            recorded = [type(r.event) for r in await log.read_run(f"h-{index}")]
            assert recorded in ([EventRejected], [ProblemSubmitted, RunStarted]) or (
                recorded == [] and isinstance(delivery.event, UnknownEvent))

    asyncio.run(scenario())


def test_the_depth_limit_is_exact_for_arrays_and_objects() -> None:
    """An event nesting exactly MAX_DEPTH levels decodes; one level more is refused, whatever the kinds."""
    for kinds in ([True], [False], [True, False]):
        for depth, fits in ((MAX_DEPTH - 2, True), (MAX_DEPTH - 1, False)):
            body = json.dumps({**SKELETON, "metadata": {"k": json.loads(_nest(depth, kinds))}})
            assert isinstance(_decodes_or_refuses(body), ProblemSubmitted) is fits, (kinds, depth)


FIXED_DEPTH_TYPES = [t for t in EVENT_TYPES if not nests_freely(t)]


@pytest.mark.parametrize("event_type", FIXED_DEPTH_TYPES, ids=tag_of)
@settings(max_examples=12, deadline=None)
@given(data=st.data(), depth=st.integers(0, 3000), kinds=st.lists(st.booleans(), min_size=1, max_size=4))
def test_a_deep_unknown_field_in_a_fixed_depth_type_is_dropped_or_refused(event_type, data, depth, kinds) -> None:
    """A type whose schema fixes every depth decodes to the same event with or without an unknown
    field of any nesting (the decoder skips it), or refuses it as nested too deep; nothing else."""
    event = data.draw(st.builds(event_type, **WIRE_ONLY.get(event_type, {})))
    body = encode(event)
    with_field = body[:-1] + b',"zz_from_elsewhere":' + _nest(depth, kinds).encode() + b"}"
    result = _decodes_or_refuses(with_field)
    if isinstance(result, DecodeError):
        assert depth > MAX_DEPTH and "nested deeper" in str(result)
    else:
        assert result == decode(body)


@pytest.mark.parametrize(("field", "wrap"), [("metadata", ProblemSubmitted), ("config", ProblemSubmitted)])
@settings(max_examples=30, deadline=None)
@given(depth=st.integers(MAX_DEPTH - 4, 3000))
def test_a_free_form_field_deeper_than_the_limit_is_always_refused(field, wrap, depth) -> None:
    """Where the schema lets a value nest freely, the typed decode is followed by the depth check."""
    body = json.dumps({**SKELETON, field: {"k": "NEST"}}).replace('"NEST"', _nest(depth, [True, False]))
    result = _decodes_or_refuses(body.encode())
    if depth + 2 <= MAX_DEPTH:
        assert isinstance(result, wrap)
    else:
        assert isinstance(result, DecodeError) and "nested deeper" in str(result)


def test_a_deep_run_settings_value_is_refused() -> None:
    """run.started's settings are free-form: a value past the limit is refused, not decoded."""
    started = json.loads(encode(RunStarted(event_id="e", run_id="r", occurred_at=SKELETON_TIME, workflow="reason")))
    started["settings"] = {"k": json.loads(_nest(MAX_DEPTH, [True]))}
    result = _decodes_or_refuses(json.dumps(started).encode())
    assert isinstance(result, DecodeError) and "nested deeper" in str(result)
