"""Determinism verification over golden histories and hand-made changes."""

from __future__ import annotations

from dataclasses import replace

import pytest

from events import ModelResponded, ToolCallRequested
from events.record import Recorded
from handlers.routes import ROUTES, Route
from replay.errors import NondeterminismError
from replay.verify import verify_run, verify_runs
from tests.replay.support import golden


@pytest.mark.parametrize("name", ["good_code_then_answer", "good_invalid_code_answer"])
async def test_recorded_good_history_verifies(name: str) -> None:
    """A history recorded by the engine reproduces byte for byte."""
    result = await verify_run(golden(name))
    assert result.ok, result.first_difference and result.first_difference.describe()
    assert result.checked >= 8


async def test_edited_action_is_reported_at_its_sequence() -> None:
    """An ActionParsed edited in the log is the first difference, with a field diff."""
    result = await verify_run(golden("edited_action_parsed"))
    first = result.first_difference
    assert not result.ok and first is not None
    assert (first.kind, first.seq, first.tag, first.handler) == ("payload", 5, "action.parsed", "take_action")
    assert any(line.startswith("action:") for line in first.fields)


async def test_edited_prompt_is_reported_at_its_sequence() -> None:
    """A ModelCallRequested whose prompt was edited is reported at its own sequence."""
    result = await verify_run(golden("edited_prompt"))
    first = result.first_difference
    assert first is not None and (first.seq, first.tag, first.cause_seq) == (3, "model.call_requested", 2)
    assert "Be brief." in first.describe()


async def test_raise_on_failure_names_the_sequence() -> None:
    """With raise_on_failure a difference raises NondeterminismError carrying the seq."""
    with pytest.raises(NondeterminismError) as info:
        await verify_run(golden("edited_action_parsed"), raise_on_failure=True)
    assert info.value.seq == 5


async def test_event_no_longer_emitted_is_reported() -> None:
    """A recorded decider output that today's decider does not emit is 'unexpected'."""

    async def act_without_tools(event, ctx):
        outputs = await _take_action(event, ctx)
        return [o for o in outputs if not isinstance(o, ToolCallRequested)]

    routes = _with_decider(ModelResponded, act_without_tools)
    result = await verify_run(golden("good_code_then_answer"), routes=routes)
    assert result.first_difference is not None
    assert (result.first_difference.kind, result.first_difference.tag) == ("unexpected", "tool.call_requested")
    assert result.first_difference.seq == 6


async def test_new_event_from_changed_decider_is_missing_from_log() -> None:
    """A decider that now emits an extra event is reported as missing from the log."""

    async def act_twice(event, ctx):
        outputs = list(await _take_action(event, ctx))
        return [*outputs, ctx.new(type(outputs[0]), "extra", **_payload(outputs[0]))]

    result = await verify_run(golden("good_code_then_answer"), routes=_with_decider(ModelResponded, act_twice))
    assert result.first_difference is not None and result.first_difference.kind == "missing"
    assert result.first_difference.seq == 4


async def test_crashing_decider_is_a_difference_not_a_crash() -> None:
    """A decider that raises during replay is reported, and verification carries on."""

    async def broken(event, ctx):
        raise RuntimeError("boom")

    result = await verify_run(golden("good_code_then_answer"), routes=_with_decider(ModelResponded, broken))
    assert result.first_difference is not None and result.first_difference.kind == "crashed"
    assert "boom" in result.first_difference.describe()


async def test_verify_runs_collects_failures_by_run() -> None:
    """verify_runs reports every run and keys failures by run id."""
    results = await verify_runs([golden("good_code_then_answer"), golden("good_invalid_code_answer"),
                                 _renamed(golden("edited_prompt"), "r-edited")])
    assert not results.ok
    assert list(results.failures) == ["r-edited"]


async def test_empty_history_is_ok_and_checks_nothing() -> None:
    """An empty history has nothing to disagree with."""
    result = await verify_run([])
    assert result.ok and result.checked == 0


async def test_history_order_does_not_matter_to_verification() -> None:
    """Records are verified in stream order whatever order they are given in."""
    assert (await verify_run(list(reversed(golden("good_code_then_answer"))))).ok


def _with_decider(event_type, handler, name: str = "take_action") -> list[Route]:
    return [replace(r, handler=handler) if r.event_type is event_type and r.name == name else r for r in ROUTES]


async def _take_action(event, ctx):
    route = next(r for r in ROUTES if r.name == "take_action")
    return await route.handler(event, ctx)


def _payload(event) -> dict:
    skip = {"event_id", "run_id", "occurred_at", "causation_id", "correlation_id"}
    return {f: getattr(event, f) for f in event.__struct_fields__ if f not in skip}


def _renamed(records: list[Recorded], run_id: str) -> list[Recorded]:
    import msgspec

    return [Recorded(r.seq, r.subject, msgspec.structs.replace(r.event, run_id=run_id)) for r in records]
