"""The policy events: on the wire, in the schema, under their policy's own subjects."""

from __future__ import annotations

from datetime import UTC, datetime

import msgspec
import pytest

from events import decode, encode
from events.catalog import TYPES_BY_TAG
from events.model import ModelResponded
from events.policy import PolicyActivated, PolicyUpdated, PolicyUpdateFailed, RolloutDiscarded, policy_run_id
from events.subjects import parse_subject, subject_for

NOW = datetime(2026, 11, 25, tzinfo=UTC)


def _updated(**fields: object) -> PolicyUpdated:
    base: dict[str, object] = {"event_id": "u1", "run_id": policy_run_id(), "occurred_at": NOW,
                               "version": 3, "checkpoint": "/ckpt/step-3"}
    base.update(fields)
    return PolicyUpdated(**base)  # type: ignore[arg-type]


def test_policy_events_are_registered_under_their_tags() -> None:
    """Each policy event type is registered under its own tag."""
    for cls in (PolicyUpdated, PolicyActivated, PolicyUpdateFailed, RolloutDiscarded):
        assert TYPES_BY_TAG[cls.__struct_config__.tag] is cls


def test_a_policy_update_round_trips_and_lives_under_its_policy_run() -> None:
    """A policy update round-trips through encoding and is stored under its policy run's subject."""
    event = _updated(adapter="apollo-lora", roles=["policy", "verifier"], trainer_step=3)
    assert decode(encode(event)) == event
    assert subject_for(event) == "apollo.run.policy-default.policy.updated"
    assert parse_subject(subject_for(event)) == ("policy-default", "policy.updated")


def test_a_policy_update_defaults_to_the_policy_role_and_full_weights() -> None:
    """A policy update defaults to the policy role and full weights (no adapter)."""
    event = _updated()
    assert event.roles == ["policy"]
    assert event.adapter is None


def test_an_update_without_a_version_or_checkpoint_does_not_decode() -> None:
    """A policy update missing its version, or with a non-integer one, fails to decode."""
    raw = msgspec.json.encode({"type": "policy.updated", "event_id": "x", "run_id": "policy-default",
                               "occurred_at": "2026-11-25T00:00:00Z", "checkpoint": "/c"})
    with pytest.raises(Exception, match="version"):
        decode(raw)
    raw = msgspec.json.encode({"type": "policy.updated", "event_id": "x", "run_id": "policy-default",
                               "occurred_at": "2026-11-25T00:00:00Z", "version": "three", "checkpoint": "/c"})
    with pytest.raises(Exception, match="int"):
        decode(raw)


def test_a_recorded_model_reply_without_a_version_still_decodes() -> None:
    """A model reply recorded before policy versions existed still decodes, unversioned."""
    raw = msgspec.json.encode({"type": "model.responded", "event_id": "m", "run_id": "r",
                               "occurred_at": "2026-11-25T00:00:00Z", "call_id": "c", "role": "policy",
                               "step": 0, "text": "hi", "model": "m"})
    event = decode(raw)
    assert isinstance(event, ModelResponded)
    assert event.policy_version is None


def test_the_timeline_says_what_each_policy_event_means() -> None:
    """The timeline summarises each policy event in words."""
    from engine.cli.render import summary

    assert summary(_updated()) == "policy default v3 written: /ckpt/step-3"
    activated = PolicyActivated(event_id="a", run_id=policy_run_id(), occurred_at=NOW, version=3,
                                method="lora", load_ms=812.4)
    assert summary(activated) == "policy default v3 served (lora, 812 ms)"
    failed = PolicyUpdateFailed(event_id="f", run_id=policy_run_id(), occurred_at=NOW, version=2,
                                reason="version 2 is not newer than the served version 3")
    assert summary(failed) == "policy default v2 not served: version 2 is not newer than the served version 3"
    discarded = RolloutDiscarded(event_id="d", run_id="r-1", occurred_at=NOW, trajectory_id="t", group_id="g",
                                 reason="stale: policy version 1 is 2 versions behind the trainer's 3")
    assert summary(discarded) == "trajectory not trained: stale: policy version 1 is 2 versions behind the trainer's 3"
