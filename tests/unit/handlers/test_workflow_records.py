"""Every list of workflows is derived from the one tuple of records in handlers/workflows.py."""

from __future__ import annotations

import argparse
from datetime import UTC, datetime

from engine.cli.main import build_parser
from engine.config.settings import Settings
from events.run import RunStarted
from handlers.routes import EPISODE_ROUTES, ROUTES
from handlers.workflows import DEFAULT_WORKFLOW, RUN_SECTIONS, WORKFLOW_NAMES, WORKFLOWS


def _workflow_options(parser: argparse.ArgumentParser, path: str = "apollo") -> dict[str, argparse.Action]:
    """Every ``--workflow`` option of every (sub)command, by command path."""
    found: dict[str, argparse.Action] = {}
    for action in parser._actions:  # argparse keeps its actions here
        if "--workflow" in action.option_strings:
            found[path] = action
        if isinstance(action, argparse._SubParsersAction):  # the subcommands
            for name, sub in action.choices.items():
                found.update(_workflow_options(sub, f"{path} {name}"))
    return found


def _started(workflow: str) -> RunStarted:
    return RunStarted(event_id="e", run_id="r", occurred_at=datetime.now(UTC), workflow=workflow, settings={})


def test_every_workflow_option_offers_exactly_the_recorded_workflows() -> None:
    """`--workflow` on run, solve, submit, rollouts, runs... lists the records' names, default first."""
    options = _workflow_options(build_parser())
    assert {"apollo run", "apollo solve", "apollo runs"} <= set(options)
    for command, action in options.items():
        assert tuple(action.choices) == WORKFLOW_NAMES, command
        assert action.default in (None, DEFAULT_WORKFLOW), command


def test_a_run_records_exactly_the_sections_the_workflows_declare() -> None:
    """What RunStarted records (and a fork may override) is the shared sections plus each workflow's."""
    assert tuple(Settings().run_settings()) == RUN_SECTIONS


def test_each_workflow_starts_from_run_started_and_only_for_its_own_runs() -> None:
    """Each record routes RunStarted to its first decider, gated on the run's workflow name."""
    for workflow in WORKFLOWS:
        starts = [route for route in workflow.routes if route.event_type is RunStarted]
        assert len(starts) == 1, workflow.name
        (start,) = starts
        others = [name for name in WORKFLOW_NAMES if name != workflow.name]
        assert start.applies_to(_started(workflow.name))
        for other in others:
            assert not start.applies_to(_started(other))


def test_the_routing_table_is_the_shared_routes_plus_every_workflow_s_own() -> None:
    """No route is listed twice and none is missing."""
    assert len(ROUTES) == len(EPISODE_ROUTES) + sum(len(w.routes) for w in WORKFLOWS)
    assert len({route.name for route in ROUTES}) == len(ROUTES)
