"""A reasoning episode records the policy version of every model call and seals them."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from engine.app.operations import submission
from engine.models.fake_server import FakeOpenAIServer
from engine.models.router import ModelRouter
from engine.serving import ActivePolicies
from engine.testing.harness import make_settings, new_memory_log, run_until_done, services
from events.episode import TrajectorySealed, Turn
from events.model import ChatMessage, ModelResponded
from events.policy import PolicyActivated, policy_run_id
from handlers.episode.flow import version_fields
from replay.verify import verify_run


def _activation(version: int, endpoint: str | None, served_model: str | None = None) -> PolicyActivated:
    return PolicyActivated(event_id=f"a{version}", run_id=policy_run_id(), occurred_at=datetime.now(UTC),
                           version=version, method="in_process", endpoint=endpoint, served_model=served_model)


async def _episode(registry: ActivePolicies, server: FakeOpenAIServer) -> list[Any]:
    log = new_memory_log()
    settings = make_settings({"models": {"policy": {"base_url": server.base_url, "model": "base"}}})
    svc = services(settings, models=ModelRouter(policies=registry))
    await log.append(submission("r-v", "What is 6 times 7?", ground_truth="42"))
    await run_until_done(log, svc, ["r-v"])
    records = await log.read_run("r-v")
    assert (await verify_run(records)).ok  # the versions come from the recorded replies: replay agrees
    return [r.event for r in records]


async def test_a_weight_swap_mid_episode_is_recorded_per_call_and_in_the_sealed_trajectory() -> None:
    """A weight swap mid-episode is recorded per model call and in the sealed trajectory."""
    registry = ActivePolicies()
    replies = ["<python_code>print(6*7)</python_code>", "<answer>\\boxed{42}</answer>"]

    def model(messages: list[dict[str, Any]]) -> str:
        reply = replies.pop(0)
        if replies:  # the trainer's next version is activated while the first call is served
            registry.apply(_activation(2, server.base_url, served_model="apollo-v2"))
        return reply

    async with FakeOpenAIServer(model, models=("base",)) as server:
        registry.apply(_activation(1, server.base_url))
        events = await _episode(registry, server)
        sent = [body["model"] for body in server.bodies]

    responded = [e for e in events if isinstance(e, ModelResponded)]
    assert [e.policy_version for e in responded] == [1, 2]
    assert sent == ["base", "apollo-v2"]
    [sealed] = [e for e in events if isinstance(e, TrajectorySealed)]
    assert [t.policy_version for t in sealed.turns] == [1, 2]
    assert sealed.policy_versions == [1, 2]
    assert sealed.policy_version == "1"  # the oldest: staleness counts from it


async def test_an_episode_with_nothing_activated_is_unversioned() -> None:
    """An episode run with no policy activated is recorded as unversioned."""
    async with FakeOpenAIServer(lambda messages: "<answer>\\boxed{42}</answer>") as server:
        events = await _episode(ActivePolicies(), server)
    [sealed] = [e for e in events if isinstance(e, TrajectorySealed)]
    assert (sealed.policy_versions, sealed.policy_version) == ([], None)
    assert all(e.policy_version is None for e in events if isinstance(e, ModelResponded))


def test_a_trajectorys_versions_are_distinct_ascending_and_skip_unversioned_turns() -> None:
    """A trajectory's policy versions are distinct, ascending and skip unversioned turns."""
    def turn(step: int, version: int | None) -> Turn:
        return Turn(step=step, prompt=[ChatMessage(role="user", content="q")], response="r", policy_version=version)

    fields = version_fields([turn(0, 4), turn(1, None), turn(2, 3), turn(3, 4)])
    assert fields == {"policy_versions": [3, 4], "policy_version": "3"}
