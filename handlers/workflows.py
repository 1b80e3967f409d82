"""Every workflow, one record each: its name, what it does, its settings sections and its deciders.

A run names its workflow in ``ProblemSubmitted.workflow``. Everything that lists workflows
(the CLI's ``--workflow`` choices, the check in ``start_run``, the sections a run records
and a fork may override, the routing table) is derived from :data:`WORKFLOWS`, so adding a
workflow is its deciders' module plus one record here (and, if it has settings of its own,
their typed section in ``engine/config/settings.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from events.episode import AnswerGraded
from events.evolve import RoundCompleted, RoundStarted, VerifierReported
from events.model import ModelCallFailed, ModelResponded
from events.run import RunStarted
from events.tool import ToolFailed, ToolReturned
from handlers.episode import flow
from handlers.episode.flow import MAIN
from handlers.evolve import deciders as evolve
from handlers.routing import Route

SHARED_SECTIONS = ("episode", "models")
"""Settings sections every run records in ``RunStarted``, whatever its workflow."""


@dataclass(frozen=True)
class Workflow:
    """One workflow: ``routes`` are its own deciders (the episode's shared routes serve all)."""

    name: str
    about: str
    routes: tuple[Route, ...]
    sections: tuple[str, ...] = ()
    """Settings sections only this workflow reads, recorded in ``RunStarted`` with the shared ones."""


def _started_as(name: str) -> Any:
    return lambda event: event.workflow == name


def _evolve_episode(event: Any) -> bool:
    return event.episode != MAIN


REASON = Workflow(
    name="reason",
    about="one episode: the policy thinks, runs tools and answers; the answer is graded",
    routes=(Route(RunStarted, flow.begin_episode, "decide", "begin_episode", _started_as("reason")),),
)

EVOLVE = Workflow(
    name="evolve",
    about="rounds of episodes: each attempt summarised, verifiers vote, memory carries into the next round",
    sections=("evolve", "branches"),
    routes=(  # each evolve decider ignores non-evolve episodes
        Route(RunStarted, evolve.on_run_started, "decide", "evolve_begin", _started_as("evolve")),
        Route(RoundStarted, evolve.on_round_started, "decide", "evolve_round_started"),
        Route(ModelResponded, evolve.on_model_responded, "decide", "evolve_reply", _evolve_episode),
        Route(ModelCallFailed, evolve.on_model_call_failed, "decide", "evolve_call_failed", _evolve_episode),
        Route(ToolReturned, evolve.on_tool_result, "decide", "evolve_observe_tool", _evolve_episode),
        Route(ToolFailed, evolve.on_tool_result, "decide", "evolve_observe_tool_failure", _evolve_episode),
        Route(AnswerGraded, evolve.on_answer_graded, "decide", "evolve_answer_graded", _evolve_episode),
        Route(VerifierReported, evolve.on_verifier_reported, "decide", "evolve_count_votes"),
        Route(RoundCompleted, evolve.on_round_completed, "decide", "evolve_advance"),
    ),
)

WORKFLOWS: tuple[Workflow, ...] = (REASON, EVOLVE)
"""The first is the default."""

WORKFLOW_NAMES: tuple[str, ...] = tuple(workflow.name for workflow in WORKFLOWS)
DEFAULT_WORKFLOW = WORKFLOW_NAMES[0]

RUN_SECTIONS: tuple[str, ...] = tuple(dict.fromkeys(
    [*SHARED_SECTIONS, *(section for workflow in WORKFLOWS for section in workflow.sections)]))
"""What ``RunStarted`` records and a submission or fork may override."""
