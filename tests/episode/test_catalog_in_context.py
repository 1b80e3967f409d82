"""Deciders take domains, graders and rewards from the catalog in their context, not from globals."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from engine.app.operations import submission
from engine.testing.harness import make_settings, new_memory_log, run_until_done, services
from events import ActionParsed, EventRejected, RunFailed, RunStarted, TrajectorySealed
from handlers.catalog import Catalog, ExtensionMissing, builtin_catalog
from handlers.context import Services
from handlers.domains import Domain, get_domain
from handlers.rewards import RewardSpec
from replay.fork import plan_fork
from replay.verify import verify_run
from tests.episode.test_episode_flow import Replies


def _shout(reply: str, answer: str | None) -> str | None:
    return None if answer is None else answer.strip().upper() + "!"


SHOUTY = Domain(name="shouty", extract=_shout, grader="exact", intro="Answer loudly.", answer_usage="a word")
DOUBLED = RewardSpec("doubled", lambda result: 2 * result.score)
CATALOG = builtin_catalog().extended(domains=[SHOUTY], rewards=[DOUBLED],
                                     origins={"domain": {"shouty": "plugin 'loud' (test)"}})
RECORDED = {"episode": {"domain": "shouty", "reward": "doubled", "tools": [], "grading": "exact"},
            "models": {"policy": {"model": "fake"}}, "tool_usage": {},
            "extensions": {"domain": {"shouty": "plugin 'loud' (test)"}}}


async def _run(catalog: Catalog, run_id: str, recorded: dict[str, Any] | None = None) -> list[Any]:
    log = new_memory_log()
    base = services(make_settings(), models=Replies(["<answer> yes </answer>"]))
    svc = dataclasses.replace(base, catalog=catalog, settings_for_run=lambda overrides: dict(recorded or RECORDED))
    await log.append(submission(run_id, "Is 7 prime?", ground_truth="YES!"))
    await run_until_done(log, svc, [run_id])
    return await log.read_run(run_id)


async def test_a_decider_takes_the_domain_and_reward_from_its_context() -> None:
    """The catalog handed in decides extraction and reward; the run replays with the same catalog."""
    records = await _run(CATALOG, "r-loud")
    events = [r.event for r in records]
    [parsed] = [e for e in events if isinstance(e, ActionParsed)]
    [sealed] = [e for e in events if isinstance(e, TrajectorySealed)]
    assert parsed.final_answer == "YES!"
    assert (sealed.score, sealed.reward) == (1.0, 2.0)
    assert (await verify_run(records, catalog=CATALOG)).ok
    with pytest.raises(LookupError):
        get_domain("shouty")  # nothing process-wide learnt of it


async def test_a_live_run_naming_a_domain_this_worker_lacks_fails_naming_it() -> None:
    """Without the domain in the catalog the run fails, and the reason names the domain and plugin."""
    records = await _run(builtin_catalog(), "r-mute")
    [failed] = [r.event for r in records if isinstance(r.event, RunFailed)]
    assert "domain 'shouty' from plugin 'loud' (test), which is not installed here" in failed.reason
    assert not any(isinstance(r.event, ActionParsed) and r.event.final_answer for r in records)


async def test_verifying_without_the_plugin_names_the_missing_entry_instead_of_deciding() -> None:
    """verify_run refuses a run recorded with a domain its catalog lacks, naming run, entry and plugin."""
    records = await _run(CATALOG, "r-verify")
    with pytest.raises(ExtensionMissing) as caught:
        await verify_run(records)
    message = str(caught.value)
    assert message.startswith("run r-verify was recorded with domain 'shouty' from plugin 'loud' (test)")
    assert (caught.value.kind, caught.value.name) == ("domain", "shouty")
    partial = builtin_catalog().extended(domains=[SHOUTY])
    with pytest.raises(ExtensionMissing, match="reward 'doubled', which is neither built in nor brought by a plugin"):
        await verify_run(records, catalog=partial)


async def test_forking_without_the_plugin_names_the_missing_entry() -> None:
    """A fork re-decides the parent's prefix, so it needs the same catalog too."""
    records = await _run(CATALOG, "r-parent")
    at = next(r.seq for r in records if isinstance(r.event, RunStarted))
    with pytest.raises(ExtensionMissing, match="domain 'shouty'"):
        await plan_fork(records, run_id="r-child", at_seq=at)
    plan = await plan_fork(records, run_id="r-child", at_seq=at, catalog=CATALOG)
    assert plan.run_id == "r-child"


async def test_garbage_recorded_settings_fail_the_run_with_the_key_named() -> None:
    """A recorded value of the wrong type fails the run through the dispatcher's usual path."""
    records = await _run(CATALOG, "r-garbage", {**RECORDED, "episode": {**RECORDED["episode"], "max_steps": "many"}})
    [failed] = [r.event for r in records if isinstance(r.event, RunFailed)]
    assert "RunSettingsError" in failed.reason and "episode.max_steps" in failed.reason
    assert not any(isinstance(r.event, EventRejected) for r in records)


def test_deciders_get_the_catalog_without_the_ports() -> None:
    """The dispatcher hands deciders the same catalog and none of the effectors' ports."""
    full = Services(models=Replies([]), catalog=CATALOG)
    assert full.for_deciders() == Services(catalog=CATALOG)
    assert Services().catalog is builtin_catalog()
