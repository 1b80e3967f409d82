"""A whole reasoning episode through the real routing table (in-memory log, fakes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import pytest

from engine.app.operations import outcome, submission
from engine.testing.harness import EchoPython, make_settings, new_memory_log, run_until_done, services
from events import (
    ActionParsed,
    AnswerGraded,
    EpisodeEnded,
    ModelCallRequested,
    ModelResponded,
    RunCompleted,
    ToolCallRequested,
    ToolReturned,
    TrajectorySealed,
)
from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelError, ModelReply
from handlers.run_settings import ModelSpec


class Replies:
    """A model that answers from a list, one reply per call, and records prompts."""

    def __init__(self, replies: Sequence[str | Exception]) -> None:
        self.replies = list(replies)
        self.prompts: list[list[ChatMessage]] = []

    def client_for(self, role: str, spec: ModelSpec, *, branch: str | None = None) -> Replies:
        return self

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> ModelReply:
        self.prompts.append(list(messages))
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        return ModelReply(text=reply, model="fake")


async def run_episode(replies: Sequence[str | Exception], *, answer: str | None = "42", **settings: Any):
    log = new_memory_log()
    model = Replies(replies)
    python = EchoPython()
    svc = services(make_settings(settings or None), models=model, tools={"python_code": python})
    await log.append(submission("r-ep", "What is 6 times 7?", ground_truth=answer))
    await run_until_done(log, svc, ["r-ep"])
    records = await log.read_run("r-ep")
    return [r.event for r in records], model, python, records


def of(events, event_type):
    return [e for e in events if isinstance(e, event_type)]


async def test_code_then_answer_trajectory_is_recorded_and_graded() -> None:
    """Python step, then an answer: tool call recorded, answer graded correct, trajectory sealed."""
    events, model, python, records = await run_episode([
        "<think>compute</think><python_code>print(6*7)</python_code>",
        "<think>done</think><answer>\\boxed{42}</answer>",
    ])
    assert python.calls == ["print(6*7)"]
    assert len(of(events, ToolReturned)) == 1
    [graded] = of(events, AnswerGraded)
    assert (graded.answer, graded.score) == ("42", 1.0)
    [ended] = of(events, EpisodeEnded)
    assert (ended.done_reason, ended.steps, ended.invalid_turns) == ("answer", 2, 0)
    [sealed] = of(events, TrajectorySealed)
    assert [t.step for t in sealed.turns] == [1, 2]
    assert sealed.turns[0].observation.startswith("<tool_response>")
    assert "<tool_response>" in model.prompts[1][-1].content
    assert outcome(records)["status"] == "completed"


async def test_ground_truth_never_reaches_a_prompt() -> None:
    """No prompt sent to the model contains the ground truth."""
    _events, model, _, _ = await run_episode(
        ["<python_code>print(1)</python_code>", "<answer>\\boxed{5}</answer>"], answer="unguessable-7781"
    )
    assert all("unguessable-7781" not in m.content for prompt in model.prompts for m in prompt)


async def test_reply_with_tool_call_and_answer_is_an_invalid_turn() -> None:
    """Both a tool call and an answer: invalid, not executed, the model is told why."""
    events, model, python, _ = await run_episode([
        "<python_code>print(1)</python_code><answer>\\boxed{1}</answer>",
        "<answer>\\boxed{42}</answer>",
    ])
    first = of(events, ActionParsed)[0]
    assert not first.valid and first.error
    assert python.calls == []
    assert first.error in model.prompts[1][-1].content
    [ended] = of(events, EpisodeEnded)
    assert ended.invalid_turns == 1 and ended.reward == 1.0


async def test_step_budget_ends_with_max_steps_and_force_answer_prompt() -> None:
    """Tool calls until the budget: the last prompt offers only the answer; done reason max_steps."""
    events, _model, python, _ = await run_episode(
        ["<python_code>print(1)</python_code>"] * 3, episode={"max_steps": 3}
    )
    assert len(python.calls) == 2  # the tool call on the last step is not executed
    requests = of(events, ModelCallRequested)
    assert [r.purpose for r in requests] == ["act", "act", "force_answer"]
    [ended] = of(events, EpisodeEnded)
    assert (ended.done_reason, ended.reward) == ("max_steps", 0.0)


async def test_empty_reply_ends_with_empty_action() -> None:
    """A blank reply ends the episode with done reason empty_action."""
    events, *_ = await run_episode(["   "])
    [ended] = of(events, EpisodeEnded)
    assert ended.done_reason == "empty_action"


@pytest.mark.parametrize(
    ("error", "reason"),
    [(ModelError("context_length", "maximum context length exceeded"), "context_length"),
     (ModelError("server_error", "HTTP 500 after 5 attempts", attempts=5), "model_failed")],
)
async def test_model_failures_end_the_episode_with_a_recorded_reason(error, reason) -> None:
    """A context-length error or exhausted retries end the run cleanly with the reason."""
    events, *_ = await run_episode([error])
    [ended] = of(events, EpisodeEnded)
    assert ended.done_reason == reason
    assert of(events, RunCompleted)[0].done_reason == reason
    assert of(events, TrajectorySealed)[0].complete is (reason != "model_failed")


@pytest.mark.parametrize("garbage", ["", "\x00\x01", "🙂 " * 500, "<answer>", "<python_code>x", "}{" * 100])
async def test_garbage_replies_never_crash_the_episode(garbage: str) -> None:
    """Garbage, unicode and unclosed tags end or continue the episode, always with a record."""
    events, *_ = await run_episode([garbage] * 4)
    assert len(of(events, RunCompleted)) == 1


async def test_answer_without_ground_truth_is_ungraded() -> None:
    """With no ground truth the answer is recorded and the grade says ungraded."""
    events, *_ = await run_episode(["<answer>\\boxed{3}</answer>"], answer=None)
    [graded] = of(events, AnswerGraded)
    assert graded.method == "ungraded" and graded.answer == "3"
    [sealed] = of(events, TrajectorySealed)
    assert sealed.graded is False  # a ground-truth trainer skips it instead of learning a 0
    assert of(events, RunCompleted)[0].score is None


async def test_boxed_inside_think_is_not_the_answer() -> None:
    """A boxed value inside <think> never counts; only the answer block does."""
    events, *_ = await run_episode(["<think>maybe \\boxed{42}</think><answer>\\boxed{41}</answer>"])
    [graded] = of(events, AnswerGraded)
    assert graded.answer == "41" and graded.score == 0.0


async def test_model_responses_carry_one_decision_each() -> None:
    """Every model reply leads to exactly one ActionParsed."""
    events, *_ = await run_episode(["<python_code>1</python_code>", "<answer>\\boxed{42}</answer>"])
    assert len(of(events, ModelResponded)) == len(of(events, ActionParsed)) == 2
    assert len(of(events, ToolCallRequested)) == 1


async def test_the_grader_is_handed_the_problems_question() -> None:
    """The answer's grading carries the question in its metadata: the math grader reads what a count may name."""
    from handlers.grading.builtin import math_grader
    from handlers.ports import QUESTION_KEY, Grade

    class RecordingMathGrader:
        def __init__(self) -> None:
            self.metadata: list[dict[str, Any]] = []

        async def grade(self, answer: str, ground_truth: str, mode: str, *, metadata: Any = None) -> Grade:
            self.metadata.append(dict(metadata or {}))
            return math_grader(answer, ground_truth, metadata or {})

    grader = RecordingMathGrader()
    log = new_memory_log()
    svc = services(make_settings(), models=Replies(["<answer>\\boxed{22 \\text{ chips}}</answer>"]), grader=grader)
    question = "There are 110 chips and 5 friends. How many chips does each friend get?"
    await log.append(submission("r-chips", question, ground_truth="22"))
    await run_until_done(log, svc, ["r-chips"])
    [graded] = of([r.event for r in await log.read_run("r-chips")], AnswerGraded)
    assert grader.metadata[0][QUESTION_KEY] == question
    assert graded.score == 1.0
