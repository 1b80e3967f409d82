"""Hostile input on a real nats-server cannot stall a run, break a reader or lose a rollout (issue 26, A-D).

Each test publishes the issue's reproduction the way a foreign client would (plain nats-py,
straight onto a run subject) next to ordinary work, runs the real routing table, and then
reads everything back the way the CLI and the trainer do.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any

import nats
import nats.js.errors
import pytest

from engine.app.operations import submission
from engine.eventlog.memory import InMemoryEventLog
from engine.nats.jetstream import PAYLOAD_HEADER, JetStreamEventLog
from engine.nats.rollout_source import JetStreamRolloutSource
from engine.nats.streams import delivered_subjects
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.runtime.projector import Projector
from engine.testing.event_builders import started, submitted
from engine.testing.harness import make_settings, services
from events import ChatMessage, EventRejected, HandlerFailed, RunCompleted, RunFailed, Turn, encode
from events.model import SamplingParams
from events.record import Unreadable
from events.run import RunStarted
from handlers.context import Services
from handlers.ports import ModelReply
from handlers.routes import ROUTES, Route
from handlers.run_settings import ModelSpec
from replay.training import RolloutSubscription, SubscriptionOptions
from replay.verify import verify_run
from tests.training.conftest import trajectory

pytestmark = [pytest.mark.nats, pytest.mark.timeout(120)]

ROOT = Path(__file__).resolve().parents[2]
ANSWER = "<answer>\\boxed{2}</answer>"
POISON = (
    b'{"type":"problem.submitted","event_id":"X","run_id":"X","metadata":' + b"[" * 5000 + b"]" * 5000 + b"}"
)
"""Issue 26 A, byte for byte: a submission whose metadata nests 5000 arrays deep."""
MISSING_DIGEST = "1" * 64
"""Issue 26 B: an Object Store name that nothing was ever stored under."""
STUB = b'{"payload_sha256":"' + MISSING_DIGEST.encode() + b'","size":10}'


class Observed:
    """Dispatch hooks recording every redelivery and handler failure."""

    def __init__(self) -> None:
        self.redeliveries: list[tuple[str, int]] = []
        self.failures: list[tuple[str, str, bool]] = []

    def acked(self, tag: str) -> None:
        return None

    def handled(self, tag: str, handler: str, seconds: float) -> None:
        return None

    def failed(self, tag: str, handler: str, gave_up: bool) -> None:
        self.failures.append((tag, handler, gave_up))

    def redelivered(self, tag: str, deliveries: int) -> None:
        self.redeliveries.append((tag, deliveries))


class GatedModel:
    """Answers every call, but holds the first one until ``release`` is set (a run in flight)."""

    def __init__(self) -> None:
        self.called = asyncio.Event()
        self.release = asyncio.Event()

    def client_for(self, role: str, spec: ModelSpec, *, branch: str | None = None) -> GatedModel:
        return self

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> ModelReply:
        self.called.set()
        await self.release.wait()
        return ModelReply(text=ANSWER, model="fake")


@pytest.fixture
async def event_log(nats_server) -> AsyncIterator[JetStreamEventLog]:
    log = await JetStreamEventLog.connect(nats_server.url)
    try:
        yield log
    finally:
        await log.close()


@pytest.fixture
async def js(nats_server) -> AsyncIterator[Any]:
    """A plain nats-py client: the foreign publisher."""
    nc = await nats.connect(nats_server.url)
    try:
        yield nc.jetstream()
    finally:
        await nc.close()


async def _has(log: Any, run_id: str, event_type: type) -> bool:
    return any(isinstance(r.event, event_type) for r in await log.read_run(run_id))


async def _dispatch_until(log: Any, condition: Any, *, model: Any = None, observer: Observed | None = None,
                          routes: Sequence[Route] = ROUTES, settings: DispatcherSettings | None = None) -> None:
    """Run the real routing table until ``condition()`` holds (bounded, so a stall fails the test), with
    the projector beside it as `apollo up` runs it (it records garbage on subjects no worker is delivered)."""
    svc = services(make_settings(), models=model or GatedModelOpen()) if routes is ROUTES else Services()
    dispatcher = Dispatcher(log, routes, svc, settings or DispatcherSettings(pull_timeout=0.05, backoff_base=0.0),
                            observer=observer)
    task = asyncio.create_task(dispatcher.run())
    stop_projector = asyncio.Event()
    projector = asyncio.create_task(Projector(log, poll=0.05, work_filter=delivered_subjects()).run(stop_projector))
    try:
        for _ in range(1500):
            if await condition():
                return
            await asyncio.sleep(0.02)
        raise AssertionError("condition not reached")
    finally:
        dispatcher.stop()
        stop_projector.set()
        await asyncio.wait_for(task, 15)
        await asyncio.wait_for(projector, 15)


def GatedModelOpen() -> GatedModel:  # reads as the model it returns
    """A GatedModel that never holds a call."""
    model = GatedModel()
    model.release.set()
    return model


async def _apollo(url: str, *args: str) -> tuple[int, str, str]:
    """``apollo --nats-url URL ARGS`` as a user runs it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "engine", "--nats-url", url, *args, cwd=ROOT, env=dict(os.environ),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 90)
    return process.returncode or 0, out.decode(), err.decode()


async def test_deeply_nested_json_is_rejected_once_and_its_neighbour_starts_on_first_delivery(event_log, js) -> None:
    """A: the poison gets one event.rejected; the submission beside it needs no redelivery to start."""
    await js.publish("apollo.run.X.problem.submitted", POISON)
    await js.publish("apollo.run.beside-poison.problem.submitted", encode(submission("beside-poison", "1+1?")),
                     headers={"Nats-Msg-Id": "beside-poison"})
    observed = Observed()

    async def settled() -> bool:
        return await _has(event_log, "X", EventRejected) and await _has(event_log, "beside-poison", RunCompleted)

    await _dispatch_until(event_log, settled, observer=observed)
    assert observed.redeliveries == [] and observed.failures == []
    skipped: list[Unreadable] = []
    [rejected] = [r.event for r in await event_log.read_run("X", unreadable=skipped)]
    assert isinstance(rejected, EventRejected) and "nested deeper than" in rejected.reason
    assert [found.reason for found in skipped] == [rejected.reason]
    everything: list[Unreadable] = []
    assert [r async for r in event_log.read_all(unreadable=everything)]
    assert [found.subject for found in everything] == ["apollo.run.X.problem.submitted"]


async def test_stub_pointing_at_a_missing_object_neither_hangs_its_run_nor_breaks_its_reads(event_log, js) -> None:
    """B: the stub is rejected on its run, the run in flight completes, its history skips and names it."""
    model = GatedModel()
    await event_log.append(submission("in-flight", "1+1?", ground_truth="2"))
    observed = Observed()

    async def settled() -> bool:  # the stub's type is not delivered: the projector records it
        return await _has(event_log, "in-flight", RunCompleted) and await _has(event_log, "in-flight", EventRejected)

    dispatch = asyncio.create_task(_dispatch_until(event_log, settled, model=model, observer=observed))
    await asyncio.wait_for(model.called.wait(), 30)
    await js.publish("apollo.run.in-flight.model.responded", STUB, headers={PAYLOAD_HEADER: MISSING_DIGEST})
    model.release.set()
    await dispatch
    skipped: list[Unreadable] = []
    records = await event_log.read_run("in-flight", unreadable=skipped)
    [rejected] = [r.event for r in records if isinstance(r.event, EventRejected)]
    assert "offloaded body" in rejected.reason and "ObjectNotFoundError" in rejected.reason
    assert [found.subject for found in skipped] == ["apollo.run.in-flight.model.responded"]
    assert not [r for r in records if isinstance(r.event, (HandlerFailed, RunFailed))]
    assert observed.failures == []
    assert (await verify_run(records)).ok


async def test_a_handler_hitting_a_missing_object_fails_its_run_with_a_reason() -> None:
    """B: a body that is gone for good counts towards giving up (not retried as a broker error)."""

    async def needs_lost_body(event: Any, ctx: Any) -> list[Any]:
        raise nats.js.errors.ObjectNotFoundError

    log = InMemoryEventLog()
    await log.append(submitted("lost-body"))
    await _dispatch_until(log, lambda: _has(log, "lost-body", RunFailed),
                          routes=[Route(type(submitted()), needs_lost_body, "decide", "start")],
                          settings=DispatcherSettings(pull_timeout=0.05, backoff_base=0.0, max_deliveries=2))
    [failure] = [r.event for r in await log.read_run("lost-body") if isinstance(r.event, HandlerFailed)]
    assert "ObjectNotFoundError" in failure.error and failure.deliveries == 2


async def test_body_naming_another_run_or_type_is_rejected_on_the_subjects_run(event_log, js) -> None:
    """C: a submission of run B on run A's subject starts nothing; A records why; so does a type mismatch."""
    await js.publish("apollo.run.run-a.problem.submitted", encode(submission("run-b", "1+1?")))
    await js.publish("apollo.run.run-c.problem.submitted", encode(started("run-c")))
    await event_log.append(submission("run-fine", "1+1?"))
    observed = Observed()

    async def settled() -> bool:
        return all([await _has(event_log, "run-a", EventRejected), await _has(event_log, "run-c", EventRejected),
                    await _has(event_log, "run-fine", RunCompleted)])

    await _dispatch_until(event_log, settled, observer=observed)
    [other_run] = [r.event for r in await event_log.read_run("run-a") if isinstance(r.event, EventRejected)]
    assert "'run-b'" in other_run.reason and "'run-a'" in other_run.reason
    [other_type] = [r.event for r in await event_log.read_run("run-c") if isinstance(r.event, EventRejected)]
    assert "'run.started'" in other_type.reason and "'problem.submitted'" in other_type.reason
    assert await event_log.read_run("run-b") == []
    skipped: list[Unreadable] = []
    assert [type(r.event) for r in await event_log.read_run("run-a", unreadable=skipped)] == [EventRejected]
    assert len(skipped) == 1 and skipped[0].reason == other_run.reason
    assert observed.failures == []


async def test_every_cli_reader_shows_poisoned_runs_without_a_traceback(nats_server, event_log, js) -> None:
    """A-C at once: `apollo runs`, `show`, `replay --all --verify` and `export` list the bad records as unreadable."""
    await js.publish("apollo.run.X.problem.submitted", POISON)
    await js.publish("apollo.run.run-a.problem.submitted", encode(submission("run-b", "1+1?")))
    await event_log.append(submission("fine", "1+1?", ground_truth="2"))
    await js.publish("apollo.run.fine.model.responded", STUB, headers={PAYLOAD_HEADER: MISSING_DIGEST})

    async def settled() -> bool:
        return all([await _has(event_log, run, EventRejected) for run in ("X", "run-a", "fine")]
                   + [await _has(event_log, "fine", RunCompleted)])

    await _dispatch_until(event_log, settled)
    url = nats_server.url
    code, out, err = await _apollo(url, "runs")
    assert code == 0 and "Traceback" not in err, err[-2000:]
    assert all(run in out for run in ("X", "run-a", "fine"))
    assert "1 unreadable record(s)" in err
    code, out, err = await _apollo(url, "show", "X")
    assert code == 0 and "Traceback" not in err, err[-2000:]
    assert "UNREADABLE" in out and "nested deeper than" in out and "event.rejected" in out
    code, out, err = await _apollo(url, "show", "fine", "--json")
    assert code == 0 and "is unreadable" in err and "offloaded body" in err
    code, out, err = await _apollo(url, "replay", "--all", "--verify")
    assert code == 0 and "Traceback" not in err, (out + err)[-2000:]
    assert "3/3 runs ok" in out and out.count("is unreadable, skipped") == 3
    code, out, err = await _apollo(url, "replay", "fine")
    assert "Traceback" not in err and "is unreadable, skipped" in out


async def test_trajectory_over_the_inline_size_is_trained_from_a_source_built_as_the_example_does(
    event_log, nats_server
) -> None:
    """D: a 1 MB question goes through the Object Store and still reaches the trainer; a lost one is reported."""
    question = "q" * 1_000_000
    big = trajectory("big", 0, turns=[Turn(step=1, prompt=[ChatMessage(role="user", content=question)],
                                           response="the answer is 2")])
    await event_log.append(big)
    await event_log.append(trajectory("big", 1))
    await event_log.append_raw("apollo.run.lost.trajectory.sealed", STUB, "lost", {PAYLOAD_HEADER: MISSING_DIGEST})
    nc = await nats.connect(nats_server.url)
    try:
        source = await JetStreamRolloutSource.create(nc.jetstream(), durable="trainer-big", ack_wait=5.0)
        sub = RolloutSubscription(source, SubscriptionOptions(group_size=2, fetch_timeout=0.2, idle_timeout=1.0,
                                                              heartbeat_interval=0.5))
        trained = {}
        async for batch in sub:
            trained.update({t.event_id: t for t in batch.trajectories})
            await batch.commit()
        await sub.aclose()
    finally:
        await nc.close()
    assert sorted(trained) == ["traj-big-0", "traj-big-1"]
    assert trained["traj-big-0"].turns[0].prompt[0].content == question
    [(_, reason)] = source.rejected
    assert "offloaded body" in reason and "ObjectNotFoundError" in reason
    assert source.deferred == 0


async def test_a_run_started_beside_garbage_of_every_kind_starts_once(event_log, js) -> None:
    """Garbage of every class in one batch with a submission: each gets one rejection, the run starts once."""
    garbage = {
        "g-deep": POISON,
        "g-deep-object": b'{"type":"problem.submitted","metadata":' + b'{"a":' * 3000 + b"1" + b"}" * 3001,
        "g-utf16": encode(submitted("g-utf16")).decode().encode("utf-16"),
        "g-latin1": b'{"type":"problem.submitted","question":"\xe9\xff"}',
        "g-empty": b"",
        "g-array": b"[1,2,3]",
    }
    for run_id, body in garbage.items():
        await js.publish(f"apollo.run.{run_id}.problem.submitted", body)
    await js.publish("apollo.run.amid-garbage.problem.submitted", encode(submitted("amid-garbage")))
    observed = Observed()

    async def settled() -> bool:
        return all([await _has(event_log, run_id, EventRejected) for run_id in garbage]
                   + [await _has(event_log, "amid-garbage", RunStarted)])

    await _dispatch_until(event_log, settled, observer=observed)
    assert observed.redeliveries == [] and observed.failures == []
    for run_id in garbage:
        assert len([r for r in await event_log.read_run(run_id, unreadable=[])]) == 1


class UnreachableStore:
    """An Object Store that times out, as one does while its stream elects a leader."""

    async def get(self, name: str) -> Any:
        raise TimeoutError


async def test_trajectory_whose_body_cannot_be_fetched_now_is_delivered_again_not_dropped(
    event_log, nats_server, monkeypatch
) -> None:
    """D: a transient Object Store failure hands the trajectory back (counted), and it is trained later."""
    import engine.nats.rollout_source

    monkeypatch.setattr(engine.nats.rollout_source, "DEFER_DELAY_S", 0.1)
    big = trajectory("late", 0, turns=[Turn(step=1, prompt=[ChatMessage(role="user", content="q" * 400_000)],
                                            response="the answer is 2")])
    await event_log.append(big)
    nc = await nats.connect(nats_server.url)
    try:
        source = await JetStreamRolloutSource.create(nc.jetstream(), durable="trainer-late", ack_wait=5.0)
        source._payloads = UnreachableStore()
        assert await source.fetch(1, 2.0) == []
        assert source.deferred == 1 and source.rejected == []
        source._payloads = None  # the store is back
        delivered = []
        for _ in range(50):
            delivered = await source.fetch(1, 0.2)
            if delivered:
                break
        [delivery] = delivered
        assert delivery.event == big
        await delivery.ack()
    finally:
        await nc.close()


async def test_the_projector_steps_past_an_unreadable_tail_once(event_log, js) -> None:
    """A poison message last in the stream is skipped and the projector's cursor moves past it (no re-read per poll)."""
    from engine.runtime.projector import Projector

    await event_log.append(submitted("projected"))
    await js.publish("apollo.run.X.problem.submitted", POISON)
    await js.publish("apollo.run.missing.model.responded", STUB, headers={PAYLOAD_HEADER: MISSING_DIGEST})
    projector = Projector(event_log)
    assert await projector.catch_up() == 1
    assert projector.position == await event_log.last_seq()
    assert await projector.catch_up() == 0


def test_history_and_export_files_with_deep_nesting_are_refused_in_one_line(tmp_path: Path) -> None:
    """`apollo replay --file` and `apollo export --events` name the bad line instead of a RecursionError traceback."""
    from engine.cli.export import read_events_file
    from engine.cli.replay import read_history
    from engine.errors import EngineError

    history = tmp_path / "deep.ndjson"
    deep = "[" * 5000 + "]" * 5000
    history.write_text('{"seq": 1, "subject": "apollo.run.X.problem.submitted", "event": ' + deep + "}\n")
    with pytest.raises(EngineError, match=r"deep.ndjson:1: not a recorded event"):
        read_history(history)
    events_file = tmp_path / "events.jsonl"
    events_file.write_bytes(POISON + b"\n" + encode(trajectory("ok", 0)) + b"\n")
    events, errors = read_events_file(events_file)
    assert [event.event_id for event in events] == ["traj-ok-0"]
    assert len(errors) == 1 and "events.jsonl:1: nested deeper than" in errors[0]


async def test_a_run_whose_engine_written_event_lost_its_body_fails_with_the_reason(event_log) -> None:
    """B: an offloaded event the engine wrote (it has a message id) whose object is gone fails its run."""
    import hashlib

    event = submission("lost-question", "q" * 300_000)
    await event_log.append(event)  # over the inline size: the stream holds a stub
    await event_log.payloads.store.delete(hashlib.sha256(encode(event)).hexdigest())  # the object store loses it
    observed = Observed()
    await _dispatch_until(event_log, lambda: _has(event_log, "lost-question", RunFailed), observer=observed)
    records = await event_log.read_run("lost-question", unreadable=[])
    assert [type(r.event) for r in records] == [EventRejected, RunFailed]
    assert "is lost" in records[1].event.reason and "offloaded body" in records[1].event.reason
    assert observed.failures == []
    assert (await verify_run(records)).ok
