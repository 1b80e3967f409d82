"""Human-readable lines for events (terminal timeline, `apollo solve` progress).

Every line numbers a run's events 1..n, the numbers `apollo fork --at` takes; the stream
sequence (global across runs) is in `apollo show --json`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from events.base import Event, tag_of
from events.episode import AnswerGraded, AnswerRegraded, EpisodeEnded, TrajectorySealed
from events.evolve import MemoryWritten, RoundCompleted, RoundStarted, VerdictReached, VerifierReported
from events.model import ModelCallFailed, ModelCallRequested, ModelResponded
from events.policy import PolicyActivated, PolicyUpdated, PolicyUpdateFailed, RolloutDiscarded, RolloutTrained
from events.record import Recorded
from events.run import (
    EventRejected,
    HandlerFailed,
    ProblemSubmitted,
    RunCancelled,
    RunCompleted,
    RunFailed,
    RunStarted,
)
from events.tool import ActionParsed, ToolCallRequested, ToolFailed, ToolReturned
from handlers.answer_text import answer_phrase
from handlers.run_settings import recorded_policy_model
from replay.call_marks import call_marks
from replay.run_ending import completion_phrase


def summary(event: Event, width: int = 100) -> str:
    """One line saying what the event means."""
    match event:
        case ProblemSubmitted():
            gt = " (ground truth given)" if event.ground_truth is not None else ""
            return f"problem {event.problem_id} [{event.data_source}] {_clip(event.question, width)}{gt}"
        case RunStarted():
            model = recorded_policy_model(event.settings) or "?"
            return f"workflow {event.workflow}, policy model {model}"
        case ModelCallRequested():
            return f"{event.role} step {event.step}: asking {event.model} ({event.purpose})"
        case ModelResponded():
            return (f"{event.role} step {event.step}: replied in {event.latency_ms:.0f} ms{_speed(event)}"
                    f"{_marked(event)}: {_clip(event.text, width)}")
        case ModelCallFailed():
            return (f"{event.role} step {event.step}: model call failed ({event.kind}){_marked(event)}: "
                    f"{_clip(event.message, width)}")
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
            return f"{answer_phrase(event.answer)}: score {event.score:g} by {by} ({event.done_reason})"
        case AnswerRegraded():
            return (f"{_clip(answer_phrase(event.answer), width)} re-graded: "
                    f"{event.old_score:g} by {event.old_grader} -> {event.new_score:g} by {event.grader} "
                    f"{event.grader_version}")
        case EpisodeEnded():
            counts = f"{event.steps} step{'' if event.steps == 1 else 's'}, {event.invalid_turns} invalid"
            return f"episode ended: {event.done_reason}, reward {event.reward:g}, {counts}"
        case TrajectorySealed():
            who = "" if event.role == "policy" else f" ({event.role} {event.verifier})"
            vote = "" if event.vote is None else f", vote {event.vote:g}"
            reward = f"reward {event.reward:g}" if event.graded else "ungraded"
            turns = f"{len(event.turns)} turn{'' if len(event.turns) == 1 else 's'}"
            return f"trajectory sealed{who}: {turns}, {reward}{vote}"
        case RoundStarted():
            branch = f" [{event.branch}]" if event.branch else ""
            return f"round {event.round}{branch} started ({len(event.memory_entries)} memory entries shown)"
        case VerifierReported():
            branch = f" [{event.branch}]" if event.branch else ""
            judged = {1: "approves", 0: "rejects"}.get(event.judgment, f"judgment {event.judgment}")
            invalid = "" if event.valid else f" (invalid report: {event.reason})"
            retries = f", after {event.retries} retries" if event.retries else ""
            return f"round {event.round}{branch}: verifier {event.verifier} {judged}{invalid}{retries}"
        case VerdictReached():
            branch = f" [{event.branch}]" if event.branch else ""
            tie = f", a tie broken by {event.tie_rule}" if event.tie else ""
            return (f"round {event.round}{branch}: verdict {event.majority} "
                    f"({event.approvals}/{len(event.judgments)} approve{tie})")
        case MemoryWritten():
            entry = event.entry
            branch = f" [{entry.branch}]" if entry.branch else ""
            score = "" if entry.score is None else f", score {entry.score:g}"
            return f"memory {event.memory}: round {entry.round}{branch} solution, {answer_phrase(entry.answer)}{score}"
        case RoundCompleted():
            branch = f" [{event.branch}]" if event.branch else ""
            verdict = "-" if event.majority is None else f"{event.majority} ({event.approvals}/{event.verifiers})"
            answer = f"{answer_phrase(event.answer)}, verdict {verdict}, correct {event.correct}"
            return f"round {event.round}{branch} completed: {answer}"
        case RunCompleted():
            return f"run {completion_phrase(event)}"
        case RunFailed():
            return f"run failed: {event.reason}"
        case RunCancelled():
            by = f" by {event.by}" if event.by else ""
            return f"run cancelled{by}: {_clip(event.reason, width)}"
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


def timeline_line(record: Recorded, number: int, *, scoped: bool = False) -> str:
    """One `apollo show` line; ``number`` is the event's place in its run (1..n).

    ``scoped`` (evolve runs) adds the round and branch the event belongs to on every line.
    """
    event = record.event
    stamp = event.occurred_at.strftime("%H:%M:%S.%f")[:-3]
    scope = f"{scope_label(event):<14} " if scoped else ""
    return f"{number:>7}  {stamp}  {scope}{tag_of(type(event)):<22} {summary(event)}"


def progress_line(record: Recorded, number: int) -> str:
    """One line of a run followed as it happens (`apollo solve`), numbered as `apollo show` numbers it."""
    return f"  [{number:>4}] {tag_of(type(record.event)):<22} {summary(record.event, 120)}"


def numbered_progress(emit: Callable[[str], None] | None = None) -> Callable[[Recorded], None]:
    """A callback for each new event of one run, in order, printing its :func:`progress_line`."""
    count = 0

    def on_event(record: Recorded) -> None:
        nonlocal count
        count += 1
        line = progress_line(record, count)
        if emit is None:
            print(line, flush=True)
        else:
            emit(line)

    return on_event


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


def _marked(event: Event) -> str:
    """`` [CUT OFF at the token limit, 1024 tokens] [RETRIED x1 after timeout]`` for a call that did not go plainly."""
    return "".join(f" [{mark}]" for mark in call_marks(event))


def _clip(text: str, width: int) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def _speed(event: ModelResponded) -> str:
    """The server's own generation speed, where it reported one (llama.cpp does)."""
    timings = event.server_timings
    rate = timings.generated_per_second if timings is not None else None
    return "" if timings is None or rate is None else f" ({timings.generated_tokens} tokens at {rate:.0f}/s)"
