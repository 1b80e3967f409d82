"""After training, a regrade names the training steps that were paid a reward that flipped."""

from __future__ import annotations

from engine.app.operations import submission
from engine.grading.regrade import Regrader
from engine.grading.router import RegistryGrader
from engine.rollouts import train_recorder
from engine.testing.harness import make_settings, new_memory_log, run_until_done, services
from events import TrajectorySealed
from replay.audit.flip_text import render_report
from replay.audit.flips import flip_report
from replay.run_table import run_row
from replay.training import InMemoryRolloutSource, RolloutSubscription, SubscriptionOptions
from tests.audit.test_regrader import ModeGrader
from tests.episode.test_episode_flow import Replies


async def test_the_flip_report_names_the_trainer_step_that_used_a_flipped_reward() -> None:
    """Two samples of one problem graded right by math, trained at step 7; exact takes one back."""
    log = new_memory_log()
    settings = make_settings({"episode": {"grading": "math"}})
    for index, reply in enumerate(["<answer>\\boxed{5.0}</answer>", "<answer>\\boxed{5}</answer>"]):
        svc = services(settings, models=Replies([reply]), grader=RegistryGrader(ModeGrader()))
        await log.append(submission(f"r-{index}", "What is 2 + 3?", ground_truth="5", data_source="toy",
                                    group_id="g", sample_index=index, group_size=2))
        await run_until_done(log, svc, [f"r-{index}"])
    sealed = [r.event async for r in log.read_all() if isinstance(r.event, TrajectorySealed)]
    options = SubscriptionOptions(group_size=2, fetch_timeout=0.0, idle_timeout=0.0, heartbeat_interval=0.0)
    subscription = RolloutSubscription(InMemoryRolloutSource(sealed), options, policy_version=6,
                                       on_commit=train_recorder(log, trainer="grpo"))
    async for batch in subscription:
        await batch.commit(step=7)

    regrader = Regrader(log, RegistryGrader(ModeGrader()), name="exact")
    outcomes = []
    for run_id in ("r-0", "r-1"):
        records = list(await log.read_run(run_id))
        outcomes += (await regrader.regrade(run_id, records, run_row(run_id, records))).outcomes
    report = flip_report(outcomes, grader="exact", versions={"exact": regrader.versions["exact"]}, skipped={})
    [step] = report.training
    assert (step.trainer, step.step, step.trainer_version, step.to_wrong, step.runs) == ("grpo", 7, 6, 1, ["r-0"])
    text = "\n".join(render_report(report))
    assert "    trained by grpo at step 7 (unversioned, policy)" in text
    assert "grpo step 7 (rollouts of policy unversioned): 1 paid as right, now wrong" in text
