"""Readers through a failover: `apollo runs` and `replay --all` retry and resume, never restart or crash.

Issue 26, F: clients that only read must ride out a leader election. Listing runs retries
transient JetStream errors; a bulk read broken off mid-stream resumes after the last event
it handed out, so no event is read twice or skipped.
"""

from __future__ import annotations

import nats.js.errors
import pytest

from engine.nats.jetstream import JetStreamEventLog
from engine.testing.event_builders import submitted
from events import ProblemSubmitted

pytestmark = pytest.mark.nats


def _unavailable() -> nats.js.errors.APIError:
    return nats.js.errors.APIError(code=503, description="JetStream system temporarily unavailable")


async def test_listing_runs_retries_while_the_stream_has_no_leader(jetstream_log: JetStreamEventLog) -> None:
    """Two 503 answers (an election) delay `run_ids`; the third answer lists the runs."""
    for run_id in ("r-a", "r-b"):
        await jetstream_log.append(submitted(run_id))
    real_info = jetstream_log.js.stream_info
    failures = [_unavailable(), _unavailable()]

    async def flaky_info(*args: object, **kwargs: object) -> object:
        if failures:
            raise failures.pop()
        return await real_info(*args, **kwargs)

    jetstream_log.js.stream_info = flaky_info  # type: ignore[method-assign]
    assert sorted(await jetstream_log.run_ids()) == ["r-a", "r-b"]
    assert failures == []


async def test_a_bulk_read_broken_off_mid_stream_resumes_after_the_last_event(
    jetstream_log: JetStreamEventLog,
) -> None:
    """A timeout after two events: the read goes on from the third, each event exactly once."""
    for run_id in ("r-1", "r-2", "r-3", "r-4"):
        await jetstream_log.append(submitted(run_id))
    real_once = jetstream_log.events._read_all_once  # the fault goes between the consumer and its reader
    broke = []

    async def breaks_once(subject_filter, after_seq, unreadable):
        count = 0
        async for record in real_once(subject_filter, after_seq, unreadable):
            if not broke and count == 2:
                broke.append(record.seq)
                raise TimeoutError
            count += 1
            yield record

    jetstream_log.events._read_all_once = breaks_once  # type: ignore[method-assign]
    records = [record async for record in jetstream_log.read_all()]
    assert broke, "the fault was injected"
    assert [r.event.run_id for r in records] == ["r-1", "r-2", "r-3", "r-4"]
    assert all(isinstance(r.event, ProblemSubmitted) for r in records)


async def test_a_bulk_read_does_not_retry_errors_a_failover_cannot_cause(jetstream_log: JetStreamEventLog) -> None:
    """Anything but a transient error leaves the read at once, unchanged."""
    await jetstream_log.append(submitted("r-x"))

    async def broken(subject_filter, after_seq, unreadable):
        raise ValueError("not a failover")
        yield  # pragma: no cover - makes this an async generator

    jetstream_log.events._read_all_once = broken  # type: ignore[method-assign]
    with pytest.raises(ValueError, match="not a failover"):
        [record async for record in jetstream_log.read_all()]
