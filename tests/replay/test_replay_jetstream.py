"""Replay over a real JetStream log: no model calls, and forks continue on a live model."""

from __future__ import annotations

from engine.cli.replay import fork_run, rebuild_report
from engine.models.fake_server import FakeOpenAIServer
from engine.models.router import ModelRouter
from engine.testing.harness import make_settings, services
from events import RunCompleted
from replay.verify import verify_run
from tests.replay.support import run_episode, run_forked


def _policy(messages: list[dict]) -> str:
    """Code first, answer once the fake tool's output is in the prompt."""
    if "RESULT=42" in messages[-1]["content"]:
        return "<answer>\\boxed{42}</answer>"
    return "<python_code>print(6*7)</python_code>"


async def test_verify_makes_no_model_calls(jetstream_log) -> None:
    """A real episode verifies from the log while the model server sees zero new requests."""
    async with FakeOpenAIServer(_policy) as server:
        raw = {"models": {"policy": {"base_url": server.base_url, "model": "fake-model", "max_retries": 0}}}
        router = ModelRouter()
        try:
            records, _ = await run_episode(jetstream_log, "js-run", [], raw_settings=raw, models=router)
            before = server.requests_total
            result = await verify_run(await jetstream_log.read_run("js-run"))
            ok, report = await rebuild_report(records, jetstream_log)
            assert server.requests_total == before == 2
        finally:
            await router.close()
    assert result.ok and result.checked > 0
    assert ok and report["events"] == len(records)


async def test_fork_on_jetstream_calls_the_model_only_for_new_steps(jetstream_log) -> None:
    """A fork after the tool result asks the live model once, and verifies."""
    async with FakeOpenAIServer(_policy) as server:
        raw = {"models": {"policy": {"base_url": server.base_url, "model": "fake-model", "max_retries": 0}}}
        router = ModelRouter()
        try:
            records, _ = await run_episode(jetstream_log, "js-parent", [], raw_settings=raw, models=router)
            at = next(r.seq for r in records if type(r.event).__name__ == "ToolReturned")
            before = server.requests_total
            await fork_run(jetstream_log, "js-parent", at_seq=at, run_id="js-child",
                           overrides={"models": {"policy": {"model": "fake-model"}}})
            await run_forked(jetstream_log, services(make_settings(raw), models=router), ["js-child"])
            assert server.requests_total == before + 1
        finally:
            await router.close()
    child = await jetstream_log.read_run("js-child")
    assert any(isinstance(r.event, RunCompleted) for r in child)
    assert (await verify_run(child)).ok

