"""The same contract, run against the in-memory and the JetStream event logs."""

from __future__ import annotations

import asyncio

from engine.testing.event_builders import started, submitted


async def test_append_then_read_run_returns_events_in_order(event_log) -> None:
    """A run's events come back in append order with increasing sequences."""
    first, second = submitted("r-a"), started("r-a")
    await event_log.append(first)
    await event_log.append(submitted("r-b"))
    await event_log.append(second)
    records = await event_log.read_run("r-a")
    assert [r.event for r in records] == [first, second]
    assert records[0].seq < records[1].seq


async def test_append_with_same_event_id_is_stored_once(event_log) -> None:
    """Appending an event id twice is a no-op the second time."""
    event = submitted("r-dup")
    first = await event_log.append(event)
    again = await event_log.append(event)
    assert again.duplicate and again.seq == first.seq
    assert len(await event_log.read_run("r-dup")) == 1


async def test_large_payload_round_trips(event_log) -> None:
    """An event far above the inline limit reads back byte-identical."""
    big = "x" * (600 * 1024) + "é∑"
    event = submitted("r-big", question=big)
    await event_log.append(event)
    [record] = await event_log.read_run("r-big")
    assert record.event == event


async def test_read_run_window_respects_after_and_upto(event_log) -> None:
    """``after_seq``/``upto_seq`` select a window of the run."""
    seqs = [(await event_log.append(started("r-w"))).seq for _ in range(5)]
    window = await event_log.read_run("r-w", after_seq=seqs[1], upto_seq=seqs[3])
    assert [r.seq for r in window] == seqs[2:4]


async def test_read_run_tags_reads_only_those_types_in_order(event_log) -> None:
    """``read_run_tags`` gives the run's events of the named types only, in stream order."""
    first, other, last = submitted("r-t"), submitted("r-u"), started("r-t")
    for event in (first, other, started("r-u"), last):
        await event_log.append(event)
    records = await event_log.read_run_tags("r-t", ["run.started", "problem.submitted"])
    assert [r.event for r in records] == [first, last]
    assert await event_log.read_run_tags("r-t", ["run.completed"]) == []


async def test_last_run_seq_is_the_runs_last_event_and_zero_for_a_run_never_recorded(event_log) -> None:
    """``last_run_seq`` names the run's last sequence, whoever appended after it; 0 for an unknown run."""
    await event_log.append(submitted("r-l"))
    last = await event_log.append(started("r-l"))
    await event_log.append(submitted("r-m"))
    assert await event_log.last_run_seq("r-l") == last.seq
    assert await event_log.last_run_seq("r-never") == 0


async def test_run_ids_lists_submitted_runs(event_log) -> None:
    """Every run with a submission is listed."""
    await event_log.append(submitted("r-x"))
    await event_log.append(submitted("r-y"))
    await event_log.append(started("r-z"))
    assert set(await event_log.run_ids()) == {"r-x", "r-y"}


async def test_work_queue_redelivers_after_nak(event_log) -> None:
    """A nak'ed delivery comes back with a higher delivery count."""
    await event_log.append(submitted("r-q"))
    queue = await event_log.work_queue("apollo-workers")
    [delivery] = await queue.pull(10, 2.0)
    assert delivery.deliveries == 1
    await delivery.nak(0)
    [again] = await queue.pull(10, 5.0)
    assert again.seq == delivery.seq and again.deliveries == 2
    await again.ack()
    assert await queue.pull(10, 0.3) == []


async def test_handled_marks_and_checkpoints_persist(event_log) -> None:
    """Bookkeeping keys and checkpoints are readable after writing."""
    assert not await event_log.was_handled("h.e1")
    await event_log.mark_handled("h.e1")
    for _ in range(50):  # the JetStream mark is fire-and-forget: visible shortly after
        if await event_log.was_handled("h.e1"):
            break
        await asyncio.sleep(0.02)
    assert await event_log.was_handled("h.e1")
    await event_log.put_checkpoint("proj", b"state" * 100_000)
    assert await event_log.get_checkpoint("proj") == b"state" * 100_000
    assert await event_log.get_checkpoint("missing") is None


async def test_a_delivery_says_which_run_sequence_its_append_expected(event_log) -> None:
    """The run-level condition an event was appended with comes back with its delivery."""
    first = await event_log.append(submitted("r-c"), expected_run_seq=0)
    await event_log.append(started("r-c"), expected_run_seq=first.seq)
    await event_log.append(started("r-c"))
    queue = await event_log.work_queue("apollo-workers")
    deliveries = await _pull_all(queue, 3)
    assert [d.expected_run_seq for d in deliveries] == [0, first.seq, None]
    for delivery in deliveries:
        await delivery.ack()


async def test_submitting_opens_a_new_run_and_resubmitting_is_deduplicated(event_log) -> None:
    """``submit`` conditions a fresh run's first event; the same submission again is a no-op."""
    from engine.app.operations import submit

    event = submitted("r-s")
    opened = await submit(event_log, event)
    again = await submit(event_log, event)
    assert not opened.duplicate and again.duplicate and again.seq == opened.seq
    queue = await event_log.work_queue("apollo-workers")
    [delivery] = await _pull_all(queue, 1)
    assert delivery.expected_run_seq == 0
    await delivery.ack()
    assert len(await event_log.read_run("r-s")) == 1


async def _pull_all(queue, count: int) -> list:  # either log's work queue
    got: list = []
    for _ in range(20):
        got += await queue.pull(count - len(got), 1.0)
        if len(got) >= count:
            break
    return sorted(got, key=lambda delivery: delivery.seq)
