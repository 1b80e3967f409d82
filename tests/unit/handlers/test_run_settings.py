"""Recorded run settings, typed: lenient with old logs, strict with garbage, decoded once per context."""

from __future__ import annotations

import msgspec
import pytest

from engine.config import settings as engine_settings
from engine.testing.event_builders import started, submitted
from handlers import run_settings
from handlers.context import HandlerContext
from handlers.evolve.plan import plan_of, plan_of_run
from handlers.run_settings import RunSettings, RunSettingsError, run_settings_of


def test_keys_this_version_does_not_know_are_ignored_and_missing_ones_default() -> None:
    """An old (or newer) recording still decodes: unknown keys ignored, absent keys defaulted."""
    run = run_settings_of({"episode": {"max_steps": 2, "retired_option": True}, "surprise": {"x": 1},
                           "models": {"policy": {"model": "m", "api_key": "never-recorded", "extra_body": {}}}})
    assert (run.episode.max_steps, run.episode.protocol, run.episode.domain) == (2, "apollo", "math")
    assert run.model_for("policy").model == "m"
    assert run.model_for("verifier") is run.model_for("policy")  # a role without a section: the policy's
    assert run_settings_of({}).evolve.rounds == 10


@pytest.mark.parametrize(("recorded", "where"), [
    ({"episode": {"max_steps": "many"}}, "$.episode.max_steps"),
    ({"episode": []}, "$.episode"),
    ({"models": {"policy": {"temperature": "hot"}}}, "$.models.policy.temperature"),
    ({"evolve": {"rounds": 0}}, "$.evolve.rounds"),
    ({"evolve": {"tie": "coin"}}, "$.evolve.tie"),
    ({"branches": [{"policy": {}}]}, "$.branches[0]"),
    ({"tool_usage": ["python_code"]}, "$.tool_usage"),
])
def test_garbage_recorded_values_are_refused_naming_the_key(recorded: dict, where: str) -> None:
    """A value of the wrong type or out of range is a RunSettingsError that says where it is."""
    with pytest.raises(RunSettingsError, match="recorded run settings are invalid") as caught:
        run_settings_of(recorded)
    assert where in str(caught.value)


def test_a_context_decodes_its_runs_settings_once_or_carries_them_decoded() -> None:
    """A context decodes its history's run.started once; one given settings never decodes."""
    recorded = {"episode": {"max_steps": 3}}
    history = [submitted(), started(settings=recorded)]
    ctx = HandlerContext(event=history[-1], handler="h", history=history)
    first = ctx.run_settings()
    assert first.episode.max_steps == 3 and ctx.run_settings() is first
    assert plan_of_run(first).rounds == plan_of(recorded).rounds == 10
    carried = run_settings_of({"episode": {"max_steps": 5}})
    given = HandlerContext(event=history[-1], handler="h", history=history, typed_settings=carried)
    assert given.run_settings() is carried
    assert HandlerContext(event=history[0], handler="h", history=history[:1]).run_settings() == RunSettings()
    garbage = started("r-9", settings={"episode": {"max_steps": "many"}})
    with pytest.raises(RunSettingsError, match=r"run r-9: .*\$\.episode\.max_steps"):
        HandlerContext(event=garbage, handler="h", history=[garbage]).run_settings()


def test_engine_configuration_takes_its_run_setting_defaults_from_the_recorded_structs() -> None:
    """The engine's structs add only what a run never records; every recorded default has one home."""
    pairs = [(engine_settings.EpisodeSettings, run_settings.EpisodeSpec),
             (engine_settings.VerifierEpisodeSettings, run_settings.VerifierEpisodeSpec),
             (engine_settings.EvolveSettings, run_settings.EvolveSpec),
             (engine_settings.ModelSettings, run_settings.ModelSpec),
             (engine_settings.BranchSettings, run_settings.BranchSpec)]
    never_recorded = {"api_key", "test_times", "problem_max_workers"}
    typed_again = {"verifier_episode", "default_verifier", "policy", "verifier"}  # engine's stricter struct types
    engine_defaults = {"model"}  # the engine configures a model; a recording without one names none
    for engine_struct, recorded_struct in pairs:
        assert issubclass(engine_struct, recorded_struct)
        own = set(engine_struct.__annotations__) - never_recorded - typed_again - engine_defaults
        assert not own, f"{engine_struct.__name__} redefines {own}: give them one default, in {recorded_struct}"
        recorded = {f.name: f.default for f in msgspec.structs.fields(recorded_struct)}
        for field in msgspec.structs.fields(engine_struct):
            if field.name in recorded and field.name not in typed_again | engine_defaults:
                assert field.default == recorded[field.name], (engine_struct, field.name)


def test_engine_run_settings_decode_to_the_same_values() -> None:
    """What the engine records reads back as the engine's own values."""
    settings = engine_settings.validate({"episode": {"max_steps": 7, "domain": "multiple_choice"},
                                         "evolve": {"rounds": 3, "verifier_episode": {"max_steps": 2}}})
    run = run_settings_of(settings.run_settings())
    assert (run.episode.max_steps, run.episode.domain, run.evolve.rounds) == (7, "multiple_choice", 3)
    assert run.evolve.verifier_episode.max_steps == 2
    assert run.model_for("policy").model == settings.model_for("policy").model


def test_helper_roles_lay_their_keys_over_the_policy_and_branches_use_their_own_models() -> None:
    """A rag helper's partial section keeps the policy's other values; a branch's calls see its policy."""
    recorded = {"models": {"policy": {"model": "p", "temperature": 0.2}, "rag_rewriter": {"model": "rw"}},
                "branches": [{"branch_id": "b", "policy": {"model": "bp", "temperature": 0.9}}]}
    run = run_settings_of(recorded)
    assert (run.model_of_call("rag_rewriter", None).model,
            run.model_of_call("rag_rewriter", None).temperature) == ("rw", 0.2)
    assert run.model_of_call("rag_rewriter", "b").model == "bp"
    assert run.model_of_call("policy", "b").model == "bp"
    assert run.model_of_call("policy", None).model == "p"
    assert run_settings_of(recorded).role_models("b")["policy"].model == "bp"
    assert run_settings_of(recorded).role_models(None)["summarizer"].model == "p"
