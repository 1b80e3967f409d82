"""The routing table: which handlers react to which event type, and the Route type it is made of."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from events.base import Event
from events.episode import AnswerGraded
from events.evolve import RoundCompleted, RoundStarted, VerifierReported
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.run import ProblemSubmitted, RunStarted
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned
from handlers.context import HandlerContext
from handlers.episode import effects, flow, retrieval
from handlers.episode.flow import MAIN
from handlers.evolve import deciders as evolve
from handlers.lifecycle import start_run
from handlers.roles import RAG_REWRITER, RAG_SUMMARIZER

Handler = Callable[[Event, HandlerContext], Awaitable[Sequence[Event]]]


@dataclass(frozen=True)
class Route:
    """``handler`` reacts to ``event_type``.

    ``kind="decide"``: pure, re-run by replay verification, reads the run's history.
    ``kind="effect"``: performs exactly one model or tool call; never re-run by replay.
    """

    event_type: type[Event]
    handler: Handler
    kind: Literal["decide", "effect"]
    name: str
    when: Callable[[Any], bool] | None = None
    """A cheap test of the event alone. Where it is false the handler returns nothing, so
    workers skip the route without reading history or touching the handled marks.
    Replay verification ignores it and runs every decider, which catches a test that
    wrongly skips."""

    def applies_to(self, event: Event) -> bool:
        return self.when is None or self.when(event)

    @property
    def needs_history(self) -> bool:
        return self.kind == "decide"


def routes_for(table: Sequence[Route], event_type: type[Event]) -> list[Route]:
    """Routes whose event type is exactly ``event_type``."""
    return [route for route in table if route.event_type is event_type]


# Cheap tests of an event alone (Route.when): where one is false, its handler returns nothing.


def _main(event: Any) -> bool:
    return event.episode == MAIN


def _evolve_episode(event: Any) -> bool:
    return event.episode != MAIN


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


def _workflow(name: str) -> Any:
    return lambda event: event.workflow == name


ROUTES: tuple[Route, ...] = (
    Route(ProblemSubmitted, start_run, "effect", "start_run"),
    Route(RunStarted, flow.begin_episode, "decide", "begin_episode", _workflow("reason")),
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
    # The evolve workflow (handlers/evolve): each decider ignores non-evolve episodes.
    Route(RunStarted, evolve.on_run_started, "decide", "evolve_begin", _workflow("evolve")),
    Route(RoundStarted, evolve.on_round_started, "decide", "evolve_round_started"),
    Route(ModelResponded, evolve.on_model_responded, "decide", "evolve_reply", _evolve_episode),
    Route(ModelCallFailed, evolve.on_model_call_failed, "decide", "evolve_call_failed", _evolve_episode),
    Route(ToolReturned, evolve.on_tool_result, "decide", "evolve_observe_tool", _evolve_episode),
    Route(ToolFailed, evolve.on_tool_result, "decide", "evolve_observe_tool_failure", _evolve_episode),
    Route(AnswerGraded, evolve.on_answer_graded, "decide", "evolve_answer_graded", _evolve_episode),
    Route(VerifierReported, evolve.on_verifier_reported, "decide", "evolve_count_votes"),
    Route(RoundCompleted, evolve.on_round_completed, "decide", "evolve_advance"),
)
"""Deciders are re-run by replay verification; effectors never are."""
