"""One run's events reduced to the sample result that dataset metrics need, and to its results row."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from events.base import Event
from events.episode import AnswerGraded, EpisodeEnded
from events.evolve import RoundCompleted
from events.model import ModelCallFailed, ModelResponded
from events.run import ProblemSubmitted, RunCancelled, RunCompleted, RunFailed, RunStarted
from events.tool import ToolCallRequested, ToolReturned
from handlers.run_settings import recorded_run_settings
from replay.dataset_scores import INCOMPLETE_REASONS, SampleResult, could_not_complete, is_correct
from replay.run_ending import done_reason_read, round_incomplete

SAMPLING_KEYS = ("temperature", "top_p", "top_k", "max_tokens")


def sample_result(events: Iterable[Event]) -> SampleResult | None:
    """The outcome of one run; ``None`` when the run has no submission recorded."""
    problem: ProblemSubmitted | None = None
    score: float | None = None
    done_reason, steps, finished = "running", 0, False
    tool_calls = tool_successes = 0
    policy_steps = 0  # an evolve run has no main episode: its policy's steps over every round and branch
    rounds = rounds_incomplete = 0
    for event in events:
        match event:
            case ProblemSubmitted():
                problem = event
            case ToolCallRequested() if event.role == "policy":
                tool_calls += 1
            case ToolReturned() if event.role == "policy" and event.score > 0:
                tool_successes += 1
            case AnswerGraded() if event.episode == "main" and event.method != "ungraded":
                score = event.score
            case EpisodeEnded() if event.episode == "main":
                steps = event.steps
                done_reason = event.done_reason
            case EpisodeEnded() if event.role == "policy":
                policy_steps += event.steps
            case RoundCompleted():
                rounds += 1
                rounds_incomplete += round_incomplete(event.done_reason)
            case RunCompleted():
                finished = True
                done_reason = done_reason_read(event, rounds, rounds_incomplete) or done_reason
                if done_reason in INCOMPLETE_REASONS:
                    score = None  # no round judged the model: its recorded score is no verdict
                elif event.score is not None:
                    score = event.score
            case RunFailed():
                done_reason = "failed"
            case RunCancelled():
                done_reason = "cancelled"
    if problem is None:
        return None
    return SampleResult(
        problem_id=problem.problem_id,
        data_source=problem.data_source,
        sample_index=problem.sample_index,
        score=score if finished else None,
        done_reason=done_reason,
        steps=steps or policy_steps,
        tool_calls=tool_calls,
        tool_successes=min(tool_successes, tool_calls),
        finished=finished,
    )


def result_row(run_id: str, events: list[Event]) -> dict[str, Any]:
    """A results-file row: enough to audit one sample without opening the event log.

    Like lm-evaluation-harness's ``--log_samples``: the model and its sampling parameters,
    the question, ground truth, extracted answer and final response, how the grader read
    them, steps, tokens and latency; plus whether the sample could be completed and why not.
    """
    result = sample_result(events)
    row: dict[str, Any] = {"run_id": run_id}
    submitted = next((e for e in events if isinstance(e, ProblemSubmitted)), None)
    if result is None or submitted is None:
        return {**row, "status": "not submitted"}
    graded = next((e for e in reversed(events) if isinstance(e, AnswerGraded) and e.episode == "main"), None)
    row.update(
        problem_id=result.problem_id, data_source=result.data_source, sample=result.sample_index,
        settings_digest=submitted.metadata.get("settings_digest"), attempt=submitted.metadata.get("attempt", 0),
        workflow=submitted.workflow, **_model_fields(events),
        question=submitted.question, ground_truth=submitted.ground_truth,
        answer=graded.answer if graded else None, response=_final_response(events),
        score=result.score, correct=is_correct(result),
        grade_method=graded.method if graded else None, grade_detail=graded.detail if graded else None,
        done_reason=result.done_reason, status=_status(events), completed=not could_not_complete(result),
        failure=_failure(events) if could_not_complete(result) else None, steps=result.steps,
        tool_calls=result.tool_calls, tool_successes=result.tool_successes, finished=result.finished,
        **_usage(events),
    )
    return row


def _model_fields(events: list[Event]) -> dict[str, Any]:
    """Model, endpoint, sampling parameters, protocol and grader as the run recorded them."""
    started = next((e for e in events if isinstance(e, RunStarted)), None)
    run = recorded_run_settings(started.settings) if started else None
    if run is None:
        return {"model": None, "base_url": None, "sampling": dict.fromkeys(SAMPLING_KEYS), "protocol": None,
                "grader": None}
    policy = run.model_for("policy")
    return {
        "model": policy.model or None, "base_url": policy.base_url,
        "sampling": {key: getattr(policy, key) for key in SAMPLING_KEYS},
        "protocol": run.episode.protocol, "grader": run.episode.grading,
    }


def _final_response(events: list[Event]) -> str | None:
    """The policy's last reply in the main episode (the text the answer came from)."""
    replies = [e for e in events if isinstance(e, ModelResponded) and e.role == "policy" and e.episode == "main"]
    return replies[-1].text if replies else None


def _usage(events: list[Event]) -> dict[str, Any]:
    """Tokens and model time of every model call of the run, and its wall time."""
    replies = [e for e in events if isinstance(e, ModelResponded)]
    start = events[0].occurred_at
    endings = RunCompleted | RunFailed | RunCancelled
    end = next((e.occurred_at for e in reversed(events) if isinstance(e, endings)), None)
    return {
        "model_calls": len(replies),
        "prompt_tokens": sum(e.usage.prompt_tokens for e in replies if e.usage),
        "completion_tokens": sum(e.usage.completion_tokens for e in replies if e.usage),
        "model_latency_s": round(sum(e.latency_ms for e in replies) / 1000, 3),
        "latency_s": None if end is None else round((end - start).total_seconds(), 3),
    }


def _status(events: list[Event]) -> str:
    if any(isinstance(e, RunFailed) for e in events):
        return "failed"
    if any(isinstance(e, RunCancelled) for e in events):
        return "cancelled"
    return "completed" if any(isinstance(e, RunCompleted) for e in events) else "unfinished"


def _failure(events: list[Event]) -> str | None:
    """Why the run could not go on: its failure, or the last failed model call."""
    failed = next((e for e in reversed(events) if isinstance(e, RunFailed)), None)
    if failed is not None:
        return failed.reason
    cancelled = next((e for e in events if isinstance(e, RunCancelled)), None)
    if cancelled is not None:
        return f"cancelled: {cancelled.reason}"
    call = next((e for e in reversed(events) if isinstance(e, ModelCallFailed)), None)
    return None if call is None else f"{call.kind}: {call.message}"
