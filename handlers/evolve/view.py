"""What the history says about one round of one branch (a small pure fold)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from events.base import Event
from events.episode import AnswerGraded
from events.evolve import RoundCompleted, RoundStarted, VerdictReached, VerifierReported
from events.model import ModelCallFailed, ModelResponded
from events.run import ProblemSubmitted, RunStarted
from handlers.episode.prompts import HistoryStep, format_history
from handlers.evolve.plan import parse_episode
from handlers.projections.episode import EpisodeState


@dataclass(frozen=True)
class RoundView:
    """Facts of round ``round`` of ``branch`` recorded so far."""

    branch: str | None
    round: int
    problem: ProblemSubmitted | None = None
    workflow: str = ""
    started: RoundStarted | None = None
    graded: AnswerGraded | None = None
    summary: str | None = None
    summary_failed: bool = False
    reports: dict[int, VerifierReported] = field(default_factory=dict)
    verdict: VerdictReached | None = None
    aggregate: str | None = None
    aggregate_failed: bool = False
    completed: RoundCompleted | None = None


def round_view(history: Iterable[Event], branch: str | None, round_: int) -> RoundView:
    """Fold the history into the view of one round."""
    view = RoundView(branch=branch, round=round_)
    for event in history:
        view = _evolve(view, event)
    return view


def _evolve(view: RoundView, event: Event) -> RoundView:
    match event:
        case ProblemSubmitted():
            return replace(view, problem=event)
        case RunStarted():
            return replace(view, workflow=event.workflow)
    if getattr(event, "branch", None) != view.branch:
        return view
    if isinstance(event, (RoundStarted, VerifierReported, VerdictReached, RoundCompleted)):
        return _round_fact(view, event) if event.round == view.round else view
    ref = parse_episode(view.branch, getattr(event, "episode", "main"))
    if ref is None or ref.round != view.round:
        return view
    match event:
        case AnswerGraded() if ref.kind == "policy":
            return replace(view, graded=event)
        case ModelResponded() if ref.kind == "summary":
            return replace(view, summary=event.text)
        case ModelCallFailed() if ref.kind == "summary":
            return replace(view, summary_failed=True)
        case ModelResponded() if ref.kind == "aggregate":
            return replace(view, aggregate=event.text)
        case ModelCallFailed() if ref.kind == "aggregate":
            return replace(view, aggregate_failed=True)
    return view


def _round_fact(view: RoundView, event: Event) -> RoundView:
    match event:
        case RoundStarted():
            return replace(view, started=event)
        case VerifierReported():
            return replace(view, reports={**view.reports, event.verifier: event})
        case VerdictReached():
            return replace(view, verdict=event)
        case RoundCompleted():
            return replace(view, completed=event)
    return view


def completed_rounds(history: Iterable[Event]) -> list[RoundCompleted]:
    """Every completed round of the run, in stream order."""
    return [event for event in history if isinstance(event, RoundCompleted)]


def is_evolve_run(history: Iterable[Event]) -> bool:
    return any(isinstance(e, RunStarted) and e.workflow == "evolve" for e in history)


def trajectory_text(state: EpisodeState) -> str:
    """The whole trajectory (every step, not only the last) as readable text."""
    steps = [
        HistoryStep(action=s.response or "", observation=s.observation or "") for s in state.steps
    ]
    return format_history(steps, len(steps))
