"""A run's settings are decoded once, where the worker's history cache first meets its
run.started, and every handler of the run gets them on its context."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import pytest

from engine.eventlog.memory import InMemoryEventLog
from engine.runtime import histories as histories_module
from engine.runtime.dispatcher import Dispatcher, DispatcherSettings
from engine.runtime.histories import RunHistories
from engine.testing.event_builders import started, submitted
from events import ProblemSubmitted, RunCompleted, RunStarted
from events.base import Event
from handlers.context import HandlerContext, Services
from handlers.routes import Route
from handlers.run_settings import RunSettings, RunSettingsError, run_settings_of

RECORDED = {"episode": {"max_steps": 3}, "models": {"policy": {"model": "p"}, "verifier": {"temperature": 0.1}}}


def _counting(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the cache's decodes."""
    calls: list[int] = []

    def decode(settings: dict) -> RunSettings:
        calls.append(1)
        return run_settings_of(settings)

    monkeypatch.setattr(histories_module, "run_settings_of", decode)
    return calls


async def test_the_history_cache_decodes_a_runs_settings_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Asked again and again, the cache decodes a run's settings once, and gives none before run.started."""
    calls = _counting(monkeypatch)
    log = InMemoryEventLog()
    first = await log.append(submitted("r-1"))
    begun = await log.append(started("r-1", settings=RECORDED))
    histories = RunHistories(log)
    await histories.latest("r-1", begun.seq)
    assert histories.settings("r-1", first.seq) is None  # handled before run.started: the defaults
    typed = histories.settings("r-1", begun.seq)
    assert typed is not None and typed == run_settings_of(RECORDED)
    assert all(histories.settings("r-1", begun.seq) is typed for _ in range(5))
    assert histories.settings("other", begun.seq) is None
    assert len(calls) == 1
    histories.forget("r-1")
    assert histories.settings("r-1", begun.seq) is None  # forgotten with the run's events


async def test_garbage_settings_are_left_to_the_context_to_refuse(monkeypatch: pytest.MonkeyPatch) -> None:
    """Settings that do not decode are tried once; the context names the run and key to the call."""
    calls = _counting(monkeypatch)
    log = InMemoryEventLog()
    await log.append(submitted("r-2"))
    garbage = started("r-2", settings={"episode": {"max_steps": "many"}})
    begun = await log.append(garbage)
    histories = RunHistories(log)
    records = await histories.latest("r-2", begun.seq)
    assert histories.settings("r-2", begun.seq) is None and histories.settings("r-2", begun.seq) is None
    assert len(calls) == 1
    ctx = HandlerContext(event=garbage, handler="h", history=[r.event for r in records],
                         typed_settings=histories.settings("r-2", begun.seq))
    with pytest.raises(RunSettingsError, match=r"run r-2: .*max_steps"):
        ctx.run_settings()


class Flow:
    """Starts a run, then completes it; notes the settings each handler's context carries."""

    def __init__(self) -> None:
        self.carried: list[tuple[str, RunSettings | None]] = []

    async def start(self, event: ProblemSubmitted, ctx: HandlerContext) -> Sequence[Event]:
        self.carried.append(("start", ctx.typed_settings))
        return [ctx.new(RunStarted, "result", workflow="reason", settings=RECORDED)]

    async def finish(self, event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
        self.carried.append(("finish", ctx.typed_settings))
        return [ctx.new(RunCompleted, "done", done_reason="answer")]

    async def ended(self, event: RunCompleted, ctx: HandlerContext) -> Sequence[Event]:
        self.carried.append(("ended", ctx.typed_settings))
        return []

    def routes(self) -> list[Route]:
        return [
            Route(ProblemSubmitted, self.start, "effect", "start"),
            Route(RunStarted, self.finish, "decide", "finish"),
            Route(RunCompleted, self.ended, "effect", "ended"),
        ]


async def test_handlers_of_a_run_share_the_one_decoded_settings() -> None:
    """Every handler after run.started gets the same decoded settings; the one before it gets none."""
    log = InMemoryEventLog()
    await log.append(submitted("r-3"))
    flow = Flow()
    dispatcher = Dispatcher(log, flow.routes(), Services(), DispatcherSettings(pull_timeout=0.05))
    working = asyncio.create_task(dispatcher.run())
    try:
        for _ in range(400):
            if any(name == "ended" for name, _ in flow.carried):
                break
            await asyncio.sleep(0.02)
    finally:
        dispatcher.stop()
        await asyncio.wait_for(working, 10)
    carried = dict(flow.carried)
    assert carried["start"] is None
    assert carried["finish"] == run_settings_of(RECORDED)
    assert carried["ended"] is carried["finish"]
