"""One run's events reduced to the sample result that dataset metrics need."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from events.base import Event
from events.episode import AnswerGraded, EpisodeEnded
from events.run import ProblemSubmitted, RunCompleted, RunFailed
from events.tool import ToolCallRequested, ToolReturned
from replay.metrics import SampleResult


def sample_result(events: Iterable[Event]) -> SampleResult | None:
    """The outcome of one run; ``None`` when the run has no submission recorded."""
    problem: ProblemSubmitted | None = None
    score: float | None = None
    done_reason, steps, finished = "running", 0, False
    tool_calls = tool_successes = 0
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
            case RunCompleted():
                finished = True
                done_reason = event.done_reason or done_reason
                if event.score is not None:
                    score = event.score
            case RunFailed():
                done_reason = "failed"
    if problem is None:
        return None
    return SampleResult(
        problem_id=problem.problem_id,
        data_source=problem.data_source,
        sample_index=problem.sample_index,
        score=score if finished else None,
        done_reason=done_reason,
        steps=steps,
        tool_calls=tool_calls,
        tool_successes=min(tool_successes, tool_calls),
        finished=finished,
    )


def result_row(run_id: str, events: list[Event]) -> dict[str, Any]:
    """A JSONL row for a dataset run's results file."""
    result = sample_result(events)
    answer = next((e.answer for e in reversed(events) if isinstance(e, AnswerGraded) and e.episode == "main"), None)
    row: dict[str, Any] = {"run_id": run_id, "answer": answer}
    if result is not None:
        row.update(
            problem_id=result.problem_id, data_source=result.data_source, sample=result.sample_index,
            score=result.score, done_reason=result.done_reason, steps=result.steps,
            tool_calls=result.tool_calls, tool_successes=result.tool_successes, finished=result.finished,
        )
    return row
