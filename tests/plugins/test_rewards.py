"""The training reward: the grade by default, shaped by penalties or replaced by a plugin."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.app.operations import submission
from engine.plugins import load_plugins
from engine.testing.harness import make_settings, new_memory_log, run_until_done, services
from events import EpisodeEnded, TrajectorySealed
from handlers.catalog import builtin_catalog
from handlers.rewards import RewardInput, RewardSpec, compute_reward, shaped_reward
from handlers.run_settings import run_settings_of
from replay.verify import verify_run
from tests.episode.test_episode_flow import Replies
from tests.plugins.support import on_path, write_package


def test_default_reward_is_the_grade() -> None:
    """With no penalty configured the reward equals the score, invalid turns or not."""
    assert shaped_reward(RewardInput(score=1.0, invalid_turns=3, steps=4, done_reason="answer")) == 1.0


def test_invalid_turn_penalty_is_subtracted_and_floored() -> None:
    """Each invalid turn costs the penalty; the reward never drops below min_reward."""
    settings = run_settings_of({"episode": {"invalid_turn_penalty": 0.25, "min_reward": -0.5}})
    builtins = builtin_catalog()
    assert compute_reward(settings, builtins, score=1.0, invalid_turns=1, steps=2, done_reason="answer") == 0.75
    assert compute_reward(settings, builtins, score=0.0, invalid_turns=5, steps=5, done_reason="max_steps") == -0.5


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), "1", None, True])
def test_reward_function_returning_garbage_is_an_error(bad: object) -> None:
    """A reward that is not a finite number raises a ValueError naming the reward."""
    catalog = builtin_catalog().extended(rewards=[RewardSpec("bad", lambda result: bad)])
    with pytest.raises(ValueError, match="reward 'bad' returned"):
        compute_reward(run_settings_of({"episode": {"reward": "bad"}}), catalog, score=1.0, invalid_turns=0, steps=1,
                       done_reason="answer")


async def test_penalised_reward_is_sealed_with_the_trajectory() -> None:
    """An invalid turn with a configured penalty lowers the sealed reward, not the score."""
    settings = make_settings({"episode": {"invalid_turn_penalty": 0.5}})
    log = new_memory_log()
    svc = services(settings, models=Replies(["no action here", "<answer>\\boxed{42}</answer>"]))
    await log.append(submission("r-pen", "What is 6 times 7?", ground_truth="42"))
    await run_until_done(log, svc, ["r-pen"])
    events = [r.event for r in await log.read_run("r-pen")]
    [sealed] = [e for e in events if isinstance(e, TrajectorySealed)]
    [ended] = [e for e in events if isinstance(e, EpisodeEnded)]
    assert (sealed.score, sealed.reward, ended.reward, sealed.invalid_turns) == (1.0, 0.5, 0.5, 1)


async def test_plugin_reward_replaces_the_default_and_replays(tmp_path: Path) -> None:
    """episode.reward names a plugin's reward; the sealed reward uses it and the run verifies."""
    source = '''
        from engine.plugins import reward

        @reward("halved")
        def halved(result):
            return result.score / 2
    '''
    site = write_package(tmp_path / "site", "apollo-halved", {"apollo_halved.py": source},
                         {"halved": "apollo_halved:halved"})
    with on_path(site):
        settings = make_settings({"episode": {"reward": "halved"}})
        catalog = load_plugins(settings).catalog()
        log = new_memory_log()
        svc = services(settings, models=Replies(["<answer>\\boxed{42}</answer>"]))
        await log.append(submission("r-half", "What is 6 times 7?", ground_truth="42"))
        await run_until_done(log, svc, ["r-half"])
        records = await log.read_run("r-half")
        assert (await verify_run(records, catalog=catalog)).ok
    [sealed] = [r.event for r in records if isinstance(r.event, TrajectorySealed)]
    assert sealed.reward == 0.5
