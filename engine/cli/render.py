"""Human-readable lines for events (terminal timeline, `apollo solve` progress)."""

from __future__ import annotations

import re
from typing import Any

from events.base import Event, tag_of
from events.episode import AnswerGraded, AnswerRegraded, EpisodeEnded, TrajectorySealed
from events.evolve import RoundCompleted
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.policy import PolicyActivated, PolicyUpdated, PolicyUpdateFailed, RolloutDiscarded, RolloutTrained
from events.record import Recorded
from events.run import EventRejected, HandlerFailed, ProblemSubmitted, RunCompleted, RunFailed, RunStarted
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned


def summary(event: Event, width: int = 100) -> str:
    """One line saying what the event means."""
    match event:
        case ProblemSubmitted():
            gt = " (ground truth given)" if event.ground_truth is not None else ""
            return f"problem {event.problem_id} [{event.data_source}] {_clip(event.question, width)}{gt}"
        case RunStarted():
            model = event.settings.get("models", {}).get("policy", {}).get("model", "?")
            return f"workflow {event.workflow}, policy model {model}"
        case ModelCallRequested():
            return f"{event.role} step {event.step}: asking {event.model} ({event.purpose})"
        case ModelResponded():
            return f"{event.role} step {event.step}: replied in {event.latency_ms:.0f} ms: {_clip(event.text, width)}"
        case ModelCallFailed():
            return f"{event.role} step {event.step}: model call failed ({event.kind}): {_clip(event.message, width)}"
        case ActionParsed():
            validity = "valid" if event.valid else f"INVALID: {event.error}"
            tool = f" {event.tool}" if event.tool else ""
            return f"step {event.step}: action {event.kind}{tool} ({_clip(validity, width)})"
        case ToolCallRequested():
            return f"step {event.step}: running {event.tool}: {_clip(event.input, width)}"
        case ToolReturned():
            status = "ok" if event.score > 0 else "failed"
            took = f"{event.latency_ms:.0f} ms"
            return f"step {event.step}: {event.tool} {status} in {took}: {_clip(event.result, width)}"
        case ToolFailed():
            return f"step {event.step}: {event.tool} could not run: {_clip(event.error, width)}"
        case AnswerGraded():
            by = f"{event.method} {event.grader_version}" if event.grader_version else event.method
            return f"answer {event.answer!r}: score {event.score:g} by {by} ({event.done_reason})"
        case AnswerRegraded():
            return (f"answer {_clip(repr(event.answer), width)} re-graded: {event.old_score:g} by {event.old_grader} "
                    f"-> {event.new_score:g} by {event.grader} {event.grader_version}")
        case EpisodeEnded():
            counts = f"{event.steps} steps, {event.invalid_turns} invalid"
            return f"episode ended: {event.done_reason}, reward {event.reward:g}, {counts}"
        case TrajectorySealed():
            who = "" if event.role == "policy" else f" ({event.role} {event.verifier})"
            vote = "" if event.vote is None else f", vote {event.vote:g}"
            reward = f"reward {event.reward:g}" if event.graded else "ungraded"
            return f"trajectory sealed{who}: {len(event.turns)} turns, {reward}{vote}"
        case RoundCompleted():
            branch = f" [{event.branch}]" if event.branch else ""
            verdict = "-" if event.majority is None else f"{event.majority} ({event.approvals}/{event.verifiers})"
            answer = f"answer {event.answer!r}, verdict {verdict}, correct {event.correct}"
            return f"round {event.round}{branch} completed: {answer}"
        case RunCompleted():
            return f"run completed: {event.done_reason}, answer {event.answer!r}, score {event.score}"
        case RunFailed():
            return f"run failed: {event.reason}"
        case EventRejected():
            return f"rejected message at seq {event.stream_seq}: {event.reason}"
        case HandlerFailed():
            return f"handler {event.handler} gave up on {event.failed_type}: {_clip(event.error, width)}"
        case PolicyUpdated():
            return f"policy {event.policy} v{event.version} written: {_clip(event.checkpoint, width)}"
        case PolicyActivated():
            return f"policy {event.policy} v{event.version} served ({event.method}, {event.load_ms:.0f} ms)"
        case PolicyUpdateFailed():
            return f"policy {event.policy} v{event.version} not served: {_clip(event.reason, width)}"
        case RolloutDiscarded():
            return f"trajectory not trained: {_clip(event.reason, width)}"
        case RolloutTrained():
            version = "unversioned" if event.policy_version is None else f"policy v{event.policy_version}"
            reward = "" if event.reward is None else f", reward {event.reward:g}"
            return f"trajectory trained by {event.trainer} at step {event.step} ({version}{reward})"
    return tag_of(type(event))


def timeline_line(record: Recorded, number: int | None = None, *, scoped: bool = False) -> str:
    """One timeline line; ``number`` is the event's place in its run (1..n), else its stream sequence.

    ``scoped`` (evolve runs) adds the round and branch the event belongs to on every line.
    """
    event = record.event
    stamp = event.occurred_at.strftime("%H:%M:%S.%f")[:-3]
    place = record.seq if number is None else number
    scope = f"{scope_label(event):<14} " if scoped else ""
    return f"{place:>7}  {stamp}  {scope}{tag_of(type(event)):<22} {summary(event)}"


def scope_label(event: Any) -> str:
    """``r2 b:qwen`` for an event of round 2 on branch qwen; ``run`` for run-wide events."""
    event = getattr(event, "entry", event)  # a memory write belongs to its entry's round
    round_ = getattr(event, "round", None)
    if round_ is None:
        episode = getattr(event, "episode", "")
        match = _ROUND_EPISODE.search(episode) if isinstance(episode, str) else None
        round_ = int(match.group(1)) if match else None
    branch = getattr(event, "branch", None)
    parts = ([] if round_ is None else [f"r{round_}"]) + ([] if not branch else [f"b:{branch}"])
    return " ".join(parts) or "run"


_ROUND_EPISODE = re.compile(r"(?:^|:)r(\d+)\.")
"""Episode names of evolve rounds: ``[<branch>:]r<round>.<kind>[.<index>]`` (handlers/evolve/plan.py)."""


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
