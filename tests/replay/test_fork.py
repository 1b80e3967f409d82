"""Forks: the parent's prefix copied under consistent ids, then a live continuation."""

from __future__ import annotations

from collections import Counter

import pytest

from engine.cli.replay import fork_run
from engine.errors import EngineError
from engine.testing.harness import EchoPython, make_settings, new_memory_log, run_until_done, services
from events import ActionParsed, ModelCallRequested, ProblemSubmitted, RunCompleted, RunStarted
from replay.diff import diff_runs
from replay.verify import verify_run
from tests.episode.test_episode_flow import Replies
from tests.replay.support import CODE_THEN_ANSWER, run_episode, run_forked

NEW_MODEL = {"models": {"policy": {"model": "model-two"}}}


async def _parent_and_fork(at_seq: int, replies: list[str]):
    log = new_memory_log()
    parent, _ = await run_episode(log, "parent", CODE_THEN_ANSWER)
    plan = await fork_run(log, "parent", at_seq=at_seq, overrides=NEW_MODEL, run_id="child")
    model, python = Replies(replies), EchoPython()
    await run_forked(log, services(make_settings(), models=model, tools={"python_code": python}), ["child"])
    return log, parent, plan, await log.read_run("child"), model, python


async def test_fork_after_tool_result_asks_the_new_model_for_the_next_step() -> None:
    """Forked after the tool returned, only step 2 runs again, on the new model."""
    _log, _parent, _plan, child, model, python = await _parent_and_fork(7, ["<answer>\\boxed{41}</answer>"])
    first = child[0].event
    assert isinstance(first, ProblemSubmitted) and (first.parent_run_id, first.fork_seq) == ("parent", 7)
    started = next(r.event for r in child if isinstance(r.event, RunStarted))
    assert started.settings["models"]["policy"]["model"] == "model-two"
    calls = [r.event for r in child if isinstance(r.event, ModelCallRequested)]
    assert [c.step for c in calls] == [1, 2] and calls[-1].model == "model-two"
    assert len(model.prompts) == 1 and "<tool_response>" in model.prompts[0][-1].content
    assert python.calls == []  # the copied tool result is not recomputed
    done = next(r.event for r in child if isinstance(r.event, RunCompleted))
    assert (done.answer, done.score) == ("41", 0.0)


async def test_pending_model_call_is_asked_again_under_the_fork_settings() -> None:
    """A model call still waiting at the fork point is re-requested, naming the new model."""
    _log, _parent, plan, child, model, python = await _parent_and_fork(3, CODE_THEN_ANSWER)
    assert plan.dropped == [3]
    calls = [r.event for r in child if isinstance(r.event, ModelCallRequested)]
    assert [c.model for c in calls] == ["model-two", "model-two"]
    assert len(model.prompts) == 2 and python.calls == ["print(6*7)"]


async def test_fork_between_outputs_of_one_decider_creates_no_duplicates() -> None:
    """Forked between ActionParsed and ToolCallRequested, the re-run decider adds only what is missing."""
    _log, _parent, _plan, child, _model, python = await _parent_and_fork(5, ["<answer>\\boxed{42}</answer>"])
    steps = Counter(r.event.step for r in child if isinstance(r.event, ActionParsed))
    assert steps == Counter({1: 1, 2: 1})
    assert python.calls == ["print(6*7)"]
    ids = [r.event.event_id for r in child]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize("at_seq", [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 14])
async def test_fork_at_any_point_completes_and_verifies(at_seq: int) -> None:
    """Whatever the fork point, the child finishes and its own events verify."""
    _log, _parent, _plan, child, _model, _python = await _parent_and_fork(at_seq, CODE_THEN_ANSWER)
    assert any(isinstance(r.event, RunCompleted) for r in child)
    result = await verify_run(child)
    assert result.ok, result.first_difference and result.first_difference.describe()
    assert all(r.event.run_id == "child" for r in child)


async def test_fork_prefix_behaves_like_the_parent_prefix() -> None:
    """Up to the fork point the child's events equal the parent's (ids and times aside)."""
    _log, parent, _plan, child, _model, _python = await _parent_and_fork(7, ["<answer>\\boxed{41}</answer>"])
    diff = diff_runs(parent, child)
    assert not diff.same and diff.first_step == 2
    assert any(line.startswith("config.models") for line in diff.differences)
    assert diff.steps_a[0] == diff.steps_b[0]


async def test_fork_before_the_run_starts_is_refused() -> None:
    """A fork point before the parent's submission is a clear error."""
    log = new_memory_log()
    await run_episode(log, "parent", CODE_THEN_ANSWER)
    with pytest.raises(EngineError, match="before the run's first event"):
        await fork_run(log, "parent", at_seq=0, overrides={})


async def test_fork_of_unknown_run_is_refused() -> None:
    """Forking a run that is not in the log names the run."""
    with pytest.raises(EngineError, match="unknown run 'nope'"):
        await fork_run(new_memory_log(), "nope", at_seq=3, overrides={})


async def test_engine_dispatcher_does_not_redo_effects_of_a_fork() -> None:
    """The engine's own dispatcher (apollo up) leaves a fork's copied model calls alone."""
    log = new_memory_log()
    await run_episode(log, "parent", CODE_THEN_ANSWER)
    await fork_run(log, "parent", at_seq=7, overrides=NEW_MODEL, run_id="child")
    model = Replies(["<answer>\\boxed{41}</answer>"])
    await run_until_done(log, services(make_settings(), models=model), ["child"])
    assert len(model.prompts) == 1
