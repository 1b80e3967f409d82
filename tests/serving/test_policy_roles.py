"""The shipped roles (deploy/nats/auth.conf): a trainer announces weights and records discards and training,
a worker runs the serving side; neither reaches past that."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from engine.errors import PublishError
from engine.nats.jetstream import JetStreamEventLog
from engine.serving import CallableLoader, PolicySync, announce_update
from engine.testing.secured_nats import SecuredServer, secured_server
from events.policy import PolicyActivated, RolloutDiscarded
from events.subjects import subject_for_tag
from replay.training import Discarded, Trained
from tests.training.conftest import trajectory

pytestmark = [pytest.mark.nats, pytest.mark.timeout(180)]


@pytest.fixture
def server(tmp_path: Path) -> Iterator[SecuredServer]:
    with secured_server(tmp_path / "secured") as running:
        yield running


@pytest.fixture
async def admin_log(server: SecuredServer) -> AsyncIterator[JetStreamEventLog]:
    log = await JetStreamEventLog.connect(server.url, security=server.role("admin"))
    try:
        yield log
    finally:
        await log.close()


async def _client(server: SecuredServer, role: str) -> JetStreamEventLog:
    return await JetStreamEventLog.connect(server.url, security=server.role(role), manage_streams=False)


async def test_a_trainer_announces_and_a_worker_activates(server: SecuredServer, admin_log: JetStreamEventLog,
                                                          tmp_path: Path) -> None:
    """A trainer may announce updates and record training while a worker activates; other subjects are denied."""
    from engine.rollouts import discard_recorder, train_recorder

    trainer, worker = await _client(server, "trainer"), await _client(server, "worker")
    try:
        update = await announce_update(trainer, version=1, checkpoint=str(tmp_path))
        [outcome] = await PolicySync(worker, CallableLoader(lambda u: None)).catch_up()
        assert isinstance(outcome, PolicyActivated) and outcome.causation_id == update.event_id
        sealed = trajectory("g", 0)
        await worker.append(sealed)
        await discard_recorder(trainer)([Discarded(event=sealed, reason="stale", version=1, trainer_version=3)])
        await train_recorder(trainer, trainer="trainer")([Trained(event=sealed, step=1, version=1, trainer_version=1,
                                                                  reward=1.0, reward_source="ground_truth")])
        with pytest.raises(PublishError, match=re.escape("permission to publish to apollo.run.r-1.problem.submitted")):
            await trainer.append_raw(subject_for_tag("r-1", "problem.submitted"), b"{}", msg_id="r-1")
        with pytest.raises(PublishError, match=re.escape("apollo.run.policy-default.policy.activated")):
            await trainer.append_raw(subject_for_tag("policy-default", "policy.activated"), b"{}", msg_id="x")
    finally:
        await trainer.close()
        await worker.close()
    stored = [r.event async for r in admin_log.read_all()]
    assert [type(e).__name__ for e in stored] == ["PolicyUpdated", "PolicyActivated", "TrajectorySealed",
                                                  "RolloutDiscarded", "RolloutTrained"]
    assert isinstance(stored[-2], RolloutDiscarded)


async def test_a_submitter_drives_rollouts_and_sees_their_runs_end(server: SecuredServer,
                                                                  admin_log: JetStreamEventLog) -> None:
    """A submitter's credentials suffice to drive rollouts and see their runs end."""
    from datetime import UTC, datetime

    from engine.datasets import Problem
    from engine.rollouts import DriverOptions, RolloutDriver
    from events.run import RunCompleted

    submitter, worker = await _client(server, "submitter"), await _client(server, "worker")
    try:
        driver = RolloutDriver(submitter, DriverOptions(samples=1, max_in_flight=1, run_prefix="sec",
                                                        poll_interval=0.05))
        [group] = await driver.submit([Problem(problem_id="p", question="2+2?", ground_truth="4",
                                               data_source="t")])
        [run_id] = group.run_ids
        await worker.append(RunCompleted(event_id="done", run_id=run_id, occurred_at=datetime.now(UTC),
                                         done_reason="answer"))
        await driver.drain()
    finally:
        await submitter.close()
        await worker.close()
    assert group.version is None and group.done and driver.stats.groups_done == 1
