"""Bounded staleness and unversioned rollouts in the trainer subscription."""

from __future__ import annotations

from typing import Any

import pytest

from replay.training import (
    Discarded,
    InMemoryRolloutSource,
    RolloutSubscription,
    SubscriptionOptions,
    version_of,
)
from tests.training.conftest import trajectory


def _opts(**overrides: Any) -> SubscriptionOptions:
    values: dict[str, Any] = {"group_size": 2, "fetch_timeout": 0.0, "idle_timeout": 0.0, "heartbeat_interval": 0.0}
    values.update(overrides)
    return SubscriptionOptions(**values)


def _group(name: str, *versions: int | None) -> list[Any]:
    return [
        trajectory(name, i, policy_versions=[v] if v is not None else [],
                   policy_version=str(v) if v is not None else None)
        for i, v in enumerate(versions)
    ]


class Recorder:
    def __init__(self, fail: bool = False) -> None:
        self.records: list[Discarded] = []
        self.fail = fail

    async def __call__(self, records: list[Discarded]) -> None:
        if self.fail:
            raise ConnectionError("the log is unreachable")
        self.records.extend(records)


async def _trained(sub: RolloutSubscription) -> list[str]:
    names = []
    async for batch in sub:
        names += [g.group_id for g in batch.groups]
        await batch.commit()
    return names


async def test_a_group_too_far_behind_is_acknowledged_recorded_and_not_trained() -> None:
    """A group too many versions behind is acknowledged, recorded as discarded, and not trained."""
    source = InMemoryRolloutSource(_group("fresh", 4, 5) + _group("old", 3, 3))
    recorder = Recorder()
    sub = RolloutSubscription(source, _opts(max_staleness=1), policy_version=5, on_discard=recorder)
    assert await _trained(sub) == ["fresh"]
    assert source.unacked == []
    assert sub.stats.discarded_stale == 2
    assert [(r.event.group_id, r.version, r.trainer_version) for r in recorder.records] == [("old", 3, 5)] * 2
    assert {s.reason for s in sub.skipped} == {
        "stale: policy version 3 is 2 versions behind the trainer's 5 (max_staleness 1)"
    }


async def test_the_oldest_member_decides_for_the_whole_group() -> None:
    """A group's oldest member decides staleness for the whole group."""
    source = InMemoryRolloutSource(_group("mixed", 5, 2))
    sub = RolloutSubscription(source, _opts(max_staleness=2), policy_version=5)
    assert await _trained(sub) == []
    assert [s.traj_uid for s in sub.skipped] == ["traj-mixed-0", "traj-mixed-1"]


async def test_staleness_is_measured_when_the_batch_is_taken() -> None:
    """Staleness is measured when a batch is taken, against the trainer's version at that time."""
    source = InMemoryRolloutSource(_group("a", 1, 1) + _group("b", 1, 1))
    sub = RolloutSubscription(source, _opts(max_staleness=0, idle_timeout=None), policy_version=1)
    first = await anext(sub)  # both groups are ready; "b" waits for the next batch
    assert [r.staleness for r in first.rollouts] == [0, 0]
    await first.commit()
    sub.policy_version = 2  # the trainer stepped: "b" is now one version behind
    sub.options = _opts(max_staleness=0)
    assert await _trained(sub) == []
    assert sub.stats.discarded_stale == 2


async def test_a_late_member_of_a_discarded_group_is_dropped_with_a_reason() -> None:
    """A late member of a group discarded as stale is dropped and acknowledged with a reason."""
    source = InMemoryRolloutSource(_group("old", 1, 1))
    sub = RolloutSubscription(source, _opts(max_staleness=0), policy_version=3)
    assert await _trained(sub) == []
    source.publish(trajectory("old", 2, policy_versions=[1], policy_version="1"))
    sub._closed = False
    assert await _trained(sub) == []
    assert sub.skipped[-1].reason == "arrived after its group was discarded as stale"
    assert source.unacked == []


async def test_no_bound_trains_any_version() -> None:
    """Without a staleness bound, rollouts of any version are trained."""
    source = InMemoryRolloutSource(_group("ancient", 1, 1))
    sub = RolloutSubscription(source, _opts(), policy_version=50)
    assert await _trained(sub) == ["ancient"]


async def test_unversioned_rollouts_are_trained_unless_the_configuration_forbids_them() -> None:
    """Unversioned rollouts are trained unless allow_unversioned is off, then discarded and recorded."""
    allowed = RolloutSubscription(InMemoryRolloutSource(_group("u", None, None)), _opts(max_staleness=0),
                                  policy_version=2)
    assert await _trained(allowed) == ["u"]

    source = InMemoryRolloutSource(_group("u", None, None) + _group("v", 2, 2))
    recorder = Recorder()
    refused = RolloutSubscription(source, _opts(allow_unversioned=False), policy_version=2, on_discard=recorder)
    assert await _trained(refused) == ["v"]
    assert refused.stats.discarded_unversioned == 2
    assert [r.version for r in recorder.records] == [None, None]
    assert refused.skipped[0].reason == "no numeric policy version (unversioned rollouts are not allowed)"
    assert source.unacked == []


async def test_a_discard_that_cannot_be_recorded_is_handed_back_not_acknowledged() -> None:
    """A discard that cannot be recorded leaves its rollouts unacknowledged for a later retry."""
    source = InMemoryRolloutSource(_group("old", 1, 1))
    failing = RolloutSubscription(source, _opts(max_staleness=0), policy_version=4, on_discard=Recorder(fail=True))
    with pytest.raises(ConnectionError, match="unreachable"):
        await _trained(failing)
    assert failing.stats.discard_record_failures == 2
    assert sorted(source.unacked) == [1, 2]
    assert failing.skipped == []

    recorder = Recorder()
    again = RolloutSubscription(source, _opts(max_staleness=0), policy_version=4, on_discard=recorder)
    assert await _trained(again) == []
    assert len(recorder.records) == 2
    assert source.unacked == []


def test_a_trajectorys_version_is_its_oldest_turns() -> None:
    """A trajectory's version is its oldest turn's, falling back to a numeric legacy field, else none."""
    assert version_of(trajectory("g", 0, policy_versions=[3, 4], policy_version="3")) == 3
    assert version_of(trajectory("g", 0, policy_version="7")) == 7  # recorded before per-turn versions
    assert version_of(trajectory("g", 0, policy_version="v-x")) is None
    assert version_of(trajectory("g", 0)) is None


@pytest.mark.parametrize("bad", [-1, True])
def test_a_negative_or_boolean_staleness_bound_is_refused(bad: Any) -> None:
    """A negative or boolean max_staleness is refused."""
    with pytest.raises(ValueError, match="max_staleness"):
        _opts(max_staleness=bad)
