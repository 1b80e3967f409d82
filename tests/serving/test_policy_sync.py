"""Weight sync through the log against a real nats-server and the fake vLLM server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from engine.models.fake_server import FakeOpenAIServer
from engine.models.router import ModelRouter
from engine.serving import (
    ActivationWatcher,
    ActivePolicies,
    CallableLoader,
    LoadFailed,
    PolicySync,
    VllmLoraLoader,
    announce_update,
    wait_for_outcome,
)
from events.model import ChatMessage, SamplingParams
from events.policy import PolicyActivated, PolicyUpdated, PolicyUpdateFailed, policy_run_id
from handlers.run_settings import ModelSpec

pytestmark = pytest.mark.nats

HELLO = [ChatMessage(role="user", content="1+1?")]


def _sync(log: Any, vllm: FakeOpenAIServer, registry: ActivePolicies) -> PolicySync:
    return PolicySync(log, VllmLoraLoader(vllm.base_url), endpoint=vllm.base_url, registry=registry)


async def _policy_events(log: Any) -> list[Any]:
    return [r.event for r in await log.read_run(policy_run_id())]


async def test_a_lora_update_is_loaded_then_activated_and_new_calls_carry_its_version(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """A LoRA update is loaded and activated, and later policy calls at that endpoint carry its version."""
    registry = ActivePolicies()
    router = ModelRouter(policies=registry)
    spec = ModelSpec(base_url=vllm.base_url, model="base", max_retries=0)
    before = await router.client_for("policy", spec).complete(HELLO, SamplingParams())
    assert before.policy_version is None

    update = await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"),
                                   adapter="apollo", base_model="base", trainer_step=1)
    sync = _sync(jetstream_log, vllm, registry)
    [outcome] = await sync.catch_up()

    assert isinstance(outcome, PolicyActivated)
    assert (outcome.version, outcome.served_model, outcome.method) == (1, "apollo-v1", "lora")
    assert outcome.causation_id == update.event_id
    assert vllm.lora.calls == [("load", {"lora_name": "apollo-v1", "lora_path": str(checkpoints / "step-1")})]
    reply = await router.client_for("policy", spec).complete(HELLO, SamplingParams())
    assert reply.policy_version == 1
    assert vllm.bodies[-1]["model"] == "apollo-v1"
    # Another role, or the same role at another endpoint, is not served by it.
    helper = await router.client_for("summarizer", spec).complete(HELLO, SamplingParams())
    assert helper.policy_version is None
    assert vllm.bodies[-1]["model"] == "base"
    assert registry.for_call("policy", "http://127.0.0.1:9/v1") is None


async def test_the_next_version_replaces_the_adapter_and_unloads_the_previous(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """The next policy version replaces the served adapter and unloads the previous one."""
    registry = ActivePolicies()
    sync = _sync(jetstream_log, vllm, registry)
    for version in (1, 2):
        await announce_update(jetstream_log, version=version, checkpoint=str(checkpoints / f"step-{version}"),
                              adapter="apollo")
    outcomes = await sync.catch_up()
    assert [type(o).__name__ for o in outcomes] == ["PolicyActivated", "PolicyActivated"]
    assert [call for call, _ in vllm.lora.calls] == ["load", "load", "unload"]
    assert vllm.lora.calls[2][1] == {"lora_name": "apollo-v1"}
    assert list(vllm.lora.loaded) == ["apollo-v2"]
    assert registry.version_of("default") == 2


async def test_an_older_version_is_refused_without_touching_the_server(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """An update older than the served version is refused without calling the server."""
    registry = ActivePolicies()
    sync = _sync(jetstream_log, vllm, registry)
    await announce_update(jetstream_log, version=2, checkpoint=str(checkpoints / "step-2"), adapter="apollo")
    await sync.catch_up()
    calls = len(vllm.lora.calls)
    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"), adapter="apollo")
    [outcome] = await sync.catch_up()
    assert isinstance(outcome, PolicyUpdateFailed)
    assert outcome.reason == "version 1 is not newer than the served version 2"
    assert outcome.active_version == 2
    assert len(vllm.lora.calls) == calls
    assert registry.version_of("default") == 2


async def test_a_missing_checkpoint_is_refused_and_the_old_weights_keep_serving(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """An update with a missing checkpoint is refused and the previous weights keep serving."""
    registry = ActivePolicies()
    sync = _sync(jetstream_log, vllm, registry)
    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"), adapter="apollo")
    await announce_update(jetstream_log, version=2, checkpoint=str(checkpoints / "gone"), adapter="apollo")
    outcomes = await sync.catch_up()
    assert isinstance(outcomes[1], PolicyUpdateFailed)
    assert outcomes[1].reason == f"checkpoint not found: {checkpoints / 'gone'}"
    assert list(vllm.lora.loaded) == ["apollo-v1"]
    active = registry.for_call("policy", vllm.base_url)
    assert active is not None and (active.version, active.served_model) == (1, "apollo-v1")


async def test_a_server_refusal_is_recorded_with_the_servers_words(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """A server's refusal to load an adapter is recorded with the server's own message."""
    vllm.lora.refuse_next = "LoRA rank 64 is greater than max_lora_rank 16."
    sync = _sync(jetstream_log, vllm, ActivePolicies())
    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"), adapter="apollo")
    [outcome] = await sync.catch_up()
    assert isinstance(outcome, PolicyUpdateFailed)
    assert "HTTP 400" in outcome.reason and "max_lora_rank 16" in outcome.reason
    assert outcome.active_version is None


async def test_a_lora_update_without_an_adapter_name_is_refused(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """A LoRA update without an adapter name is refused without calling the server."""
    sync = _sync(jetstream_log, vllm, ActivePolicies())
    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"))
    [outcome] = await sync.catch_up()
    assert isinstance(outcome, PolicyUpdateFailed)
    assert "adapter name" in outcome.reason
    assert vllm.lora.calls == []


class _Crash(BaseException):
    """Stands in for the process dying (not an Exception: nothing may catch it)."""


async def test_a_crash_before_the_reload_is_recovered_by_the_next_sync(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """An update left unanswered by a crash before the reload is activated by the next sync."""
    def die(update: PolicyUpdated) -> str | None:
        raise _Crash

    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"), adapter="apollo")
    with pytest.raises(_Crash):
        await PolicySync(jetstream_log, CallableLoader(die), registry=ActivePolicies()).catch_up()
    assert [type(e) for e in await _policy_events(jetstream_log)] == [PolicyUpdated]

    registry = ActivePolicies()
    [outcome] = await _sync(jetstream_log, vllm, registry).catch_up()
    assert isinstance(outcome, PolicyActivated)
    assert registry.version_of("default") == 1


class _DiesOnAppend:
    """An event log whose process dies on the first append (after the reload happened)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def append(self, event: Any, **kwargs: Any) -> Any:
        raise _Crash


async def test_a_crash_between_the_reload_and_the_record_activates_once(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """A crash between the reload and its record still leads to exactly one recorded activation."""
    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"), adapter="apollo")
    with pytest.raises(_Crash):
        await _sync(_DiesOnAppend(jetstream_log), vllm, ActivePolicies()).catch_up()
    assert list(vllm.lora.loaded) == ["apollo-v1"]  # vLLM has it; the log does not say so yet

    outcomes = await _sync(jetstream_log, vllm, ActivePolicies()).catch_up()
    again = await _sync(jetstream_log, vllm, ActivePolicies()).catch_up()  # a third start: nothing new
    assert isinstance(outcomes[0], PolicyActivated)
    assert again == outcomes
    recorded = [e for e in await _policy_events(jetstream_log) if isinstance(e, PolicyActivated)]
    assert len(recorded) == 1


class _FirstAppendFails:
    """An event log whose first append fails as a bus going away does (the process lives on)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def append(self, event: Any, **kwargs: Any) -> Any:
        if not self.failed:
            self.failed = True
            raise ConnectionError("nats: connection closed")
        return await self.inner.append(event, **kwargs)


async def test_an_update_whose_outcome_could_not_be_recorded_is_handled_at_the_same_syncs_next_look(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """An update whose outcome failed to record is handled again at the same sync's next catch-up."""
    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"), adapter="apollo")
    registry = ActivePolicies()
    sync = _sync(_FirstAppendFails(jetstream_log), vllm, registry)
    with pytest.raises(ConnectionError):
        await sync.catch_up()

    [outcome] = await sync.catch_up()
    assert isinstance(outcome, PolicyActivated)
    assert registry.version_of("default") == 1
    assert [type(e) for e in await _policy_events(jetstream_log)] == [PolicyUpdated, PolicyActivated]


async def test_a_following_sync_answers_an_update_the_trainer_waits_for(
    jetstream_log: Any, checkpoints: Path
) -> None:
    """A running sync answers an update the trainer waits for, swapping weights in process."""
    import asyncio

    swapped: list[str] = []

    async def swap(update: PolicyUpdated) -> None:
        swapped.append(update.checkpoint)

    registry = ActivePolicies()
    sync = PolicySync(jetstream_log, CallableLoader(swap), registry=registry, poll_interval=0.05)
    task = asyncio.create_task(sync.run())
    try:
        update = await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"))
        outcome = await wait_for_outcome(jetstream_log, update, timeout=30)
    finally:
        sync.stop()
        await task
    assert isinstance(outcome, PolicyActivated)
    assert (outcome.method, outcome.served_model, outcome.endpoint) == ("in_process", None, None)
    assert swapped == [str(checkpoints / "step-1")]
    assert registry.for_call("policy", "http://anything/v1") is not None


async def test_an_in_process_loader_that_raises_records_the_failure(
    jetstream_log: Any, checkpoints: Path
) -> None:
    """An in-process loader that raises is recorded as a failed update naming the error."""
    def broken(update: PolicyUpdated) -> None:
        raise RuntimeError("size mismatch for lm_head.weight")

    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"))
    [outcome] = await PolicySync(jetstream_log, CallableLoader(broken), registry=ActivePolicies()).catch_up()
    assert isinstance(outcome, PolicyUpdateFailed)
    assert outcome.reason == "RuntimeError: size mismatch for lm_head.weight"


async def test_a_loader_refusal_raised_on_purpose_keeps_its_words(jetstream_log: Any, checkpoints: Path) -> None:
    """A LoadFailed raised by a loader is recorded with its message unchanged."""
    def refuse(update: PolicyUpdated) -> None:
        raise LoadFailed("the server is draining")

    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"))
    [outcome] = await PolicySync(jetstream_log, CallableLoader(refuse), registry=ActivePolicies()).catch_up()
    assert isinstance(outcome, PolicyUpdateFailed) and outcome.reason == "the server is draining"


async def test_a_worker_process_learns_activations_from_the_log(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """Another process learns activations from the log, each only once."""
    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"), adapter="apollo")
    await _sync(jetstream_log, vllm, ActivePolicies()).catch_up()
    elsewhere = ActivePolicies()
    watcher = ActivationWatcher(jetstream_log, elsewhere)
    assert await watcher.catch_up() == 1
    assert await watcher.catch_up() == 0
    active = elsewhere.for_call("policy", vllm.base_url + "/")
    assert active is not None and (active.version, active.served_model) == (1, "apollo-v1")


async def test_nobody_answering_an_update_is_a_timeout_naming_the_version(
    jetstream_log: Any, checkpoints: Path
) -> None:
    """Waiting on an update nobody answers times out naming the version and PolicySync."""
    update = await announce_update(jetstream_log, version=4, checkpoint=str(checkpoints / "step-1"))
    with pytest.raises(TimeoutError, match=r"version 4 of policy .default.*PolicySync"):
        await wait_for_outcome(jetstream_log, update, timeout=0.2)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"version": 0}, "whole number from 1"),
        ({"version": -2}, "whole number from 1"),
        ({"version": "3"}, "whole number from 1"),
        ({"version": True}, "whole number from 1"),
        ({"checkpoint": "  "}, "checkpoint"),
        ({"policy": "a.b"}, "policy name"),
    ],
)
async def test_announcing_garbage_is_refused_before_anything_is_written(
    jetstream_log: Any, fields: dict[str, Any], message: str
) -> None:
    """Announcing an invalid update is refused before anything is written to the log."""
    args: dict[str, Any] = {"version": 1, "checkpoint": "/ckpt"}
    args.update(fields)
    with pytest.raises(ValueError, match=message):
        await announce_update(jetstream_log, **args)
    assert await jetstream_log.last_seq() == 0


async def test_announcing_a_version_twice_writes_it_once(jetstream_log: Any, checkpoints: Path) -> None:
    """Announcing the same version twice writes it once and returns the first announcement."""
    first = await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"))
    second = await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"))
    assert second == first
    assert len(await _policy_events(jetstream_log)) == 1


async def test_workers_know_the_served_version_before_their_first_call(
    jetstream_log: Any, vllm: FakeOpenAIServer, checkpoints: Path
) -> None:
    """Workers watching activations know the served version before their first call."""
    from engine.serving import watching_activations

    await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"), adapter="apollo")
    await _sync(jetstream_log, vllm, ActivePolicies()).catch_up()
    worker_registry = ActivePolicies()
    async with watching_activations(jetstream_log, worker_registry):
        active = worker_registry.for_call("policy", vllm.base_url)
        assert active is not None and active.version == 1


async def test_an_adapter_the_server_cannot_find_is_refused_with_its_404(
    jetstream_log: Any, vllm: FakeOpenAIServer
) -> None:
    """An adapter the server cannot find is refused with the server's 404 and nothing is loaded."""
    await announce_update(jetstream_log, version=1, checkpoint="s3://bucket/step-1", adapter="apollo")
    [outcome] = await _sync(jetstream_log, vllm, ActivePolicies()).catch_up()
    assert isinstance(outcome, PolicyUpdateFailed)
    assert "HTTP 404" in outcome.reason and "No adapter found for s3://bucket/step-1" in outcome.reason
    assert vllm.lora.loaded == {}


class _FlakyReads:
    """An event log whose first read fails, as when the bus is away for a moment."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.failed = False

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    async def read_run(self, run_id: str, **kwargs: Any) -> Any:
        if not self.failed:
            self.failed = True
            raise ConnectionError("nats: connection closed")
        return await self.inner.read_run(run_id, **kwargs)


async def test_a_following_sync_outlives_a_failed_read(jetstream_log: Any, checkpoints: Path) -> None:
    """A running sync survives a failed log read and still activates the next update."""
    import asyncio

    flaky = _FlakyReads(jetstream_log)
    sync = PolicySync(flaky, CallableLoader(lambda u: None), registry=ActivePolicies(), poll_interval=0.05)
    task = asyncio.create_task(sync.run())
    try:
        update = await announce_update(jetstream_log, version=1, checkpoint=str(checkpoints / "step-1"))
        outcome = await wait_for_outcome(jetstream_log, update, timeout=30)
    finally:
        sync.stop()
        await task
    assert flaky.failed and isinstance(outcome, PolicyActivated)
