"""A step's prompt is recorded as its changes from the step before, and every reader gets it whole.

Runs through the real routing table (in-memory log, which stores encoded bytes like JetStream).
"""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec

from engine.app.operations import submission
from engine.testing.harness import EchoPython, make_settings, new_memory_log, run_until_done, services
from events import (
    HandlerFailed,
    ModelCallFailed,
    ModelCallRequested,
    RunCompleted,
    RunFailed,
    RunStarted,
    TrajectorySealed,
    encode,
)
from events.model import ChatMessage, PromptDelta
from events.record import Recorded
from handlers.context import HandlerContext
from handlers.episode.effects import call_model
from handlers.projections.prompts import whole_prompts
from replay.verify import verify_run
from tests.episode.test_episode_flow import Replies, of

TOOL_REPLY = "<think>step</think><python_code>print(6 * 7)</python_code>"


async def _run(steps: int, run_id: str = "r-delta") -> tuple[list[Recorded], Replies]:
    """A run of ``steps`` tool steps then an answer, every step in the prompt's window."""
    log = new_memory_log()
    model = Replies([TOOL_REPLY] * steps + ["<answer>\\boxed{42}</answer>"])
    settings = make_settings({"episode": {"max_steps": steps + 1, "history_length": steps + 1}})
    svc = services(settings, models=model, tools={"python_code": EchoPython()})
    await log.append(submission(run_id, "What is 6 times 7?", ground_truth="42"))
    await run_until_done(log, svc, [run_id])
    return await log.read_run(run_id), model


async def test_later_steps_are_recorded_as_deltas_and_the_model_got_every_prompt_whole() -> None:
    """Step 1 is recorded whole, later steps by their changes; resolving them gives exactly what was sent."""
    records, model = await _run(5)
    events = [r.event for r in records]
    requests = of(events, ModelCallRequested)
    assert [r.prompt_delta is not None for r in requests] == [False] + [True] * 5
    assert all(r.messages == [] for r in requests[1:])  # read from the log: the wire leaves them out
    resolved = whole_prompts(events)
    assert [resolved[r.event_id] for r in requests] == model.prompts
    [sealed] = of(events, TrajectorySealed)
    assert [t.prompt for t in sealed.turns] == model.prompts  # decoded whole


async def test_a_delta_run_replays_byte_for_byte() -> None:
    """Replay verification re-decides the deltas and finds the recorded bytes."""
    records, _ = await _run(4)
    result = await verify_run(records)
    assert result.ok, result.first_difference and result.first_difference.describe()
    assert result.checked > 10


async def test_a_run_recorded_before_deltas_still_replays_whole() -> None:
    """A run whose start says ``prompts: whole`` is re-decided with whole prompts, as it was recorded."""
    records, model = await _run(3)
    prompts = iter(model.prompts)
    old: list[Recorded] = []
    for record in records:
        event = record.event
        if isinstance(event, RunStarted):
            event = msgspec.structs.replace(event, prompts="whole")
        elif isinstance(event, ModelCallRequested):
            event = msgspec.structs.replace(event, messages=next(prompts), prompt_delta=None)
        old.append(msgspec.structs.replace(record, event=event))
    result = await verify_run(old)
    assert result.ok, result.first_difference and result.first_difference.describe()


def _bytes(records: list[Recorded]) -> int:
    return sum(len(encode(r.event)) for r in records)


async def test_bytes_grow_linearly_when_every_step_stays_in_the_window() -> None:
    """Each further step adds about the same bytes; with whole prompts the additions would grow."""
    sizes = {steps: _bytes((await _run(steps, f"r-{steps}"))[0]) for steps in (4, 8, 16)}
    first, second = (sizes[8] - sizes[4]) / 4, (sizes[16] - sizes[8]) / 8
    assert second < 1.3 * first, sizes


async def test_a_request_whose_base_is_missing_fails_the_call_with_the_reason() -> None:
    """A forged or truncated history: the effector records a bad_response failure naming the call, no crash."""
    records, _ = await _run(2)
    events = [r.event for r in records]
    late = of(events, ModelCallRequested)[-1]
    forged = msgspec.structs.replace(late, prompt_delta=PromptDelta(base_call="no-such-call",
                                                                     messages=late.prompt_delta.messages))
    history = [e for e in events if e.event_id != late.event_id and not _after(e, late, events)] + [forged]
    ctx = HandlerContext(event=forged, handler="call_model", history=history,
                         services=services(make_settings(), models=Replies([]), tools={}))
    [failed] = await call_model(forged, ctx)
    assert isinstance(failed, ModelCallFailed)
    assert failed.kind == "bad_response" and "no-such-call" in failed.message


def _after(event, pivot, events) -> bool:
    return events.index(event) > events.index(pivot)


def test_the_wire_form_of_a_request_carries_no_whole_prompt_when_it_has_a_delta() -> None:
    """Encoding leaves the messages out (the delta rebuilds them); without a delta they are kept."""
    at = datetime(2026, 1, 1, tzinfo=UTC)
    request = ModelCallRequested(event_id="e", run_id="r", occurred_at=at, call_id="c2", role="policy", step=2,
                                 messages=[ChatMessage(role="user", content="x" * 500)], model="m",
                                 prompt_delta=PromptDelta(base_call="c1", messages=[]))
    assert b"x" * 500 not in encode(request)
    assert b"x" * 500 in encode(msgspec.structs.replace(request, prompt_delta=None))


async def test_a_tampered_delta_is_reported_by_replay_with_the_field_that_differs() -> None:
    """Verification names the delta's field, not the (unrecorded) whole messages."""
    records, _ = await _run(2)
    tampered = []
    for record in records:
        event = record.event
        if isinstance(event, ModelCallRequested) and event.prompt_delta is not None:
            delta = event.prompt_delta
            first = msgspec.structs.replace(delta.messages[0], pieces=["forged text"])
            event = msgspec.structs.replace(event, prompt_delta=msgspec.structs.replace(delta, messages=[first]))
        tampered.append(msgspec.structs.replace(record, event=event))
    result = await verify_run(tampered)
    assert not result.ok and result.first_difference is not None
    lines = result.first_difference.fields
    assert lines and all(line.startswith("prompt_delta") for line in lines), lines


async def test_a_forged_delta_request_on_the_bus_ends_its_run_with_the_reason() -> None:
    """A foreign client's request whose delta names no step: its call fails naming why, no decider chokes."""
    log = new_memory_log()
    model = Replies(["<answer>\\boxed{42}</answer>"] * 3)
    svc = services(make_settings(), models=model, tools={"python_code": EchoPython()})
    await log.append(submission("r-forged", "What is 6 times 7?", ground_truth="42"))
    forged = ModelCallRequested(
        event_id="forged-1", run_id="r-forged", occurred_at=datetime.now(UTC), call_id="forged-call",
        role="policy", step=1, model="m",
        prompt_delta=PromptDelta(base_call="no-such-call", kept=1, messages=[]))
    await log.append(forged)
    await run_until_done(log, svc, ["r-forged"])
    events = [r.event for r in await log.read_run("r-forged")]
    failures = [e for e in of(events, ModelCallFailed) if e.call_id == "forged-call"]
    assert failures and failures[0].kind == "bad_response" and "no-such-call" in failures[0].message
    assert not of(events, HandlerFailed) and not of(events, RunFailed)  # no decider choked on it
    [completed] = of(events, RunCompleted)
    assert completed.done_reason == "model_failed"  # the episode ended on the failed call, as on any failure
