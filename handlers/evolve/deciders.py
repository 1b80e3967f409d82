"""One evolve decider per event type, routing by the episode the event belongs to.

Events of the ``main`` episode (the ``reason`` workflow) are ignored here, and the
``reason`` deciders ignore evolve episodes, so both workflows share the effectors
(model calls, tools, grading) without reacting to each other's events.
"""

from __future__ import annotations

from collections.abc import Sequence

from events.base import Event
from events.episode import AnswerGraded
from events.evolve import RoundCompleted, RoundStarted, VerifierReported
from events.model import ModelCallFailed, ModelResponded
from events.run import RunStarted
from events.tool import ToolFailed, ToolReturned
from handlers.context import HandlerContext
from handlers.episode.flow import no_answer
from handlers.episode.retrieval import is_summary_result, summary_request
from handlers.evolve import progress, rounds, verdict, verification
from handlers.evolve.plan import parse_episode
from handlers.projections.episode import EpisodeState, episode_state
from handlers.roles import HELPER_ROLES


async def on_run_started(event: RunStarted, ctx: HandlerContext) -> Sequence[Event]:
    """An evolve run starts its first rounds."""
    return await rounds.begin_evolve(event, ctx)


async def on_round_started(event: RoundStarted, ctx: HandlerContext) -> Sequence[Event]:
    """A round asks its policy for the first action."""
    return await rounds.request_first_step(event, ctx)


async def on_model_responded(event: ModelResponded, ctx: HandlerContext) -> Sequence[Event]:
    """A reply in an evolve episode: policy action, brief, verifier action or merged report."""
    ref = parse_episode(event.branch, event.episode)
    if ref is None:
        return []
    if event.role in HELPER_ROLES:
        return _observe_summary(event, ctx)
    if ref.kind == "policy":
        return await rounds.take_policy_action(event, ctx)
    if ref.kind == "summary":
        return await verification.start_verifiers(event, ctx)
    if ref.kind == "verifier":
        return await verification.take_verifier_action(event, ctx)
    return await verdict.merge_reports(event, ctx)


async def on_model_call_failed(event: ModelCallFailed, ctx: HandlerContext) -> Sequence[Event]:
    """A failed call in an evolve episode degrades to a recorded, well-defined outcome."""
    ref = parse_episode(event.branch, event.episode)
    if ref is None:
        return []
    if event.role in HELPER_ROLES:
        return _observe_summary(event, ctx)
    if ref.kind == "policy":
        reason = "context_length" if event.kind == "context_length" else "model_failed"
        return [
            no_answer(
                ctx,
                event.step,
                reason,
                f"{event.kind}: {event.message}",
                episode=event.episode,
                branch=event.branch,
            )
        ]
    if ref.kind == "summary":
        return await verification.start_verifiers(event, ctx)
    if ref.kind == "verifier":
        return await verification.verifier_failed(event, ctx)
    return await verdict.merge_reports(event, ctx)


async def on_tool_result(event: ToolReturned | ToolFailed, ctx: HandlerContext) -> Sequence[Event]:
    """A tool result is the observation of its step; the policy or verifier goes on."""
    ref = parse_episode(event.branch, event.episode)
    if ref is None:
        return []
    state = episode_state(ctx.history, event.episode)
    summary = summary_request(ctx, state, event) if isinstance(event, ToolReturned) else None
    if summary is not None and ref.kind in ("policy", "verifier") and state.graded is None:
        return [summary]
    return _continue(ctx, state, event.branch, ref.kind, ref.round, ref.index, event.step + 1)


def _observe_summary(event: ModelResponded | ModelCallFailed, ctx: HandlerContext) -> list[Event]:
    """A retrieval summary (or its failure) completes the observation of its step."""
    ref = parse_episode(event.branch, event.episode)
    if ref is None or not is_summary_result(event):
        return []  # a rewrite: handlers.episode.retrieval searches with it
    state = episode_state(ctx.history, event.episode)
    return _continue(ctx, state, event.branch, ref.kind, ref.round, ref.index, event.step + 1)


def _continue(
    ctx: HandlerContext, state: EpisodeState, branch: str | None, kind: str, round_: int, index: int, step: int
) -> list[Event]:
    if kind == "policy":
        return rounds.continue_policy(ctx, state, branch, round_, step)
    if kind == "verifier":
        return verification.continue_verifier(ctx, state, branch, round_, index, step)
    return []


async def on_answer_graded(event: AnswerGraded, ctx: HandlerContext) -> Sequence[Event]:
    """The round's policy answer is in."""
    return await rounds.finish_policy(event, ctx)


async def on_verifier_reported(event: VerifierReported, ctx: HandlerContext) -> Sequence[Event]:
    """Start a waiting verifier (under a cap); count the votes once every verifier has reported."""
    return [
        *await verification.start_waiting_verifier(event, ctx),
        *await verdict.count_votes(event, ctx),
    ]


async def on_round_completed(event: RoundCompleted, ctx: HandlerContext) -> Sequence[Event]:
    """Next round, next branch, or the run's end."""
    return await progress.advance(event, ctx)
