"""The one routing table: which handler reacts to which event."""

from __future__ import annotations

from events.episode import AnswerGraded
from events.evolve import RoundCompleted, RoundStarted, VerifierReported
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.run import ProblemSubmitted, RunStarted
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned
from handlers.episode import effects, flow, retrieval
from handlers.evolve import deciders as evolve
from handlers.lifecycle import start_run
from handlers.routes import Route

ROUTES: tuple[Route, ...] = (
    Route(ProblemSubmitted, start_run, "effect", "start_run"),
    Route(RunStarted, flow.begin_episode, "decide", "begin_episode"),
    Route(ModelCallRequested, effects.call_model, "effect", "call_model"),
    Route(ModelResponded, flow.take_action, "decide", "take_action"),
    Route(ActionParsed, effects.grade_answer, "effect", "grade_answer"),
    Route(ToolCallRequested, effects.run_tool, "effect", "run_tool"),
    Route(ToolReturned, flow.observe_tool, "decide", "observe_tool"),
    Route(ToolFailed, flow.observe_tool, "decide", "observe_tool_failure"),
    Route(ModelCallFailed, flow.end_on_model_failure, "decide", "end_on_model_failure"),
    # local_rag's optional helper calls (any workflow): search once the query is rewritten ...
    Route(ModelResponded, retrieval.search_after_rewrite, "decide", "rag_search_after_rewrite"),
    Route(ModelCallFailed, retrieval.search_after_rewrite, "decide", "rag_search_after_failed_rewrite"),
    # ... and go on once the hits are summarised (the evolve deciders do this for their episodes).
    Route(ModelResponded, flow.observe_summary, "decide", "observe_rag_summary"),
    Route(ModelCallFailed, flow.observe_summary, "decide", "observe_failed_rag_summary"),
    Route(AnswerGraded, flow.finish_episode, "decide", "finish_episode"),
    # The evolve workflow (handlers/evolve): each decider ignores non-evolve episodes.
    Route(RunStarted, evolve.on_run_started, "decide", "evolve_begin"),
    Route(RoundStarted, evolve.on_round_started, "decide", "evolve_round_started"),
    Route(ModelResponded, evolve.on_model_responded, "decide", "evolve_reply"),
    Route(ModelCallFailed, evolve.on_model_call_failed, "decide", "evolve_call_failed"),
    Route(ToolReturned, evolve.on_tool_result, "decide", "evolve_observe_tool"),
    Route(ToolFailed, evolve.on_tool_result, "decide", "evolve_observe_tool_failure"),
    Route(AnswerGraded, evolve.on_answer_graded, "decide", "evolve_answer_graded"),
    Route(VerifierReported, evolve.on_verifier_reported, "decide", "evolve_count_votes"),
    Route(RoundCompleted, evolve.on_round_completed, "decide", "evolve_advance"),
)
"""Deciders are re-run by replay verification; effectors never are."""
