"""The routing table: which handlers react to which event type.

The episode's routes serve every workflow; each workflow adds its own from its record in
``handlers/workflows.py``.
"""

from __future__ import annotations

from typing import Any

from events.episode import AnswerGraded
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.run import ProblemSubmitted
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned
from handlers.episode import effects, flow, retrieval
from handlers.episode.flow import MAIN
from handlers.lifecycle import start_run
from handlers.roles import RAG_REWRITER, RAG_SUMMARIZER
from handlers.routing import Handler, Route, routes_for
from handlers.workflows import WORKFLOWS

__all__ = ["ROUTES", "Handler", "Route", "routes_for"]


# Cheap tests of an event alone (Route.when): where one is false, its handler returns nothing.


def _main(event: Any) -> bool:
    return event.episode == MAIN


def _main_policy(event: Any) -> bool:
    return event.episode == MAIN and event.role == "policy"


def _may_end_episode(event: ActionParsed) -> bool:
    # A policy action with no tool to run: a valid answer, or (under a reference protocol,
    # which sets ``tool`` only when one runs) any action that may end the episode.
    return event.role == "policy" and event.tool is None


def _rewrite(event: Any) -> bool:
    return event.role == RAG_REWRITER


def _main_summary(event: Any) -> bool:
    return event.episode == MAIN and event.role == RAG_SUMMARIZER


EPISODE_ROUTES: tuple[Route, ...] = (
    Route(ProblemSubmitted, start_run, "effect", "start_run"),
    Route(ModelCallRequested, effects.call_model, "effect", "call_model"),
    Route(ModelResponded, flow.take_action, "decide", "take_action", _main_policy),
    Route(ActionParsed, effects.grade_answer, "effect", "grade_answer", _may_end_episode),
    Route(ToolCallRequested, effects.run_tool, "effect", "run_tool"),
    Route(ToolReturned, flow.observe_tool, "decide", "observe_tool", _main),
    Route(ToolFailed, flow.observe_tool, "decide", "observe_tool_failure", _main),
    Route(ModelCallFailed, flow.end_on_model_failure, "decide", "end_on_model_failure", _main_policy),
    # local_rag's optional helper calls (any workflow): search once the query is rewritten ...
    Route(ModelResponded, retrieval.search_after_rewrite, "decide", "rag_search_after_rewrite", _rewrite),
    Route(ModelCallFailed, retrieval.search_after_rewrite, "decide", "rag_search_after_failed_rewrite", _rewrite),
    # ... and go on once the hits are summarised (the evolve deciders do this for their episodes).
    Route(ModelResponded, flow.observe_summary, "decide", "observe_rag_summary", _main_summary),
    Route(ModelCallFailed, flow.observe_summary, "decide", "observe_failed_rag_summary", _main_summary),
    Route(AnswerGraded, flow.finish_episode, "decide", "finish_episode", _main),
)
"""Routes every workflow shares: the run's start, model and tool calls, the main episode."""

ROUTES: tuple[Route, ...] = EPISODE_ROUTES + tuple(route for workflow in WORKFLOWS for route in workflow.routes)
"""Deciders are re-run by replay verification; effectors never are."""
