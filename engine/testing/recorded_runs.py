"""Whole runs as the engine records them, made without running an episode (tests, benchmarks).

Each turn renders the policy prompt with every earlier step inside (the reason workflow's
renderer with a window as long as the run) and records it as the engine does: whole at the
first step, then as its changes from the step before (``RunStarted.prompts == "delta"``),
so a run's bytes grow the way recorded runs' do.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from events.base import Event
from events.episode import AnswerGraded, EpisodeEnded, TrajectorySealed, Turn
from events.model import ChatMessage, ModelCallRequested, ModelResponded, PromptDelta
from events.run import ProblemSubmitted, RunCancelled, RunCompleted, RunFailed, RunStarted
from events.text_delta import delta_messages
from events.tool import ActionParsed, ToolCallRequested, ToolReturned
from handlers.episode.observations import tool_response
from handlers.episode.prompts import HistoryStep, render_policy_prompt

EPOCH = datetime(2026, 1, 1, tzinfo=UTC)
MODELS = ("qwen3-8b", "llama-3.1-8b", "scripted:bench")
DATASETS = ("gsm8k", "math500", "aime24")
ENDINGS = ("completed", "completed", "completed", "failed", "cancelled", "running")


@dataclass(frozen=True)
class RunSpec:
    """What a made-up run looks like."""

    run_id: str
    at: datetime
    turns: int = 2
    model: str = MODELS[0]
    dataset: str = DATASETS[0]
    ending: str = "completed"
    score: float = 1.0
    workflow: str = "reason"


def spec_for(number: int, *, turns: int = 2) -> RunSpec:
    """The ``number``-th run of a varied series: models, datasets and endings in turn, a second apart."""
    return RunSpec(run_id=f"run-{number:08d}", at=EPOCH + timedelta(seconds=number), turns=turns,
                   model=MODELS[number % len(MODELS)], dataset=DATASETS[number % len(DATASETS)],
                   ending=ENDINGS[number % len(ENDINGS)], score=float(number % 2))


def recorded_run(spec: RunSpec) -> list[Event]:
    """Every event of one run, in the order the engine appends them."""
    return list(_events(spec))


def _events(spec: RunSpec) -> Iterator[Event]:
    run, clock = spec.run_id, _Clock(spec.at)
    question = f"Problem {run}: what is {len(run)} times 7? Show your work."
    settings = {"models": {"policy": {"model": spec.model}}, "episode": {"max_steps": spec.turns}}
    yield ProblemSubmitted(event_id=run, run_id=run, occurred_at=clock(), problem_id=f"{spec.dataset}-{run}",
                           question=question, ground_truth="42", data_source=spec.dataset, workflow=spec.workflow,
                           config=settings, metadata={"dataset": f"{spec.dataset}_{spec.workflow}"})
    yield RunStarted(event_id=f"{run}-started", run_id=run, occurred_at=clock(), workflow=spec.workflow,
                     settings=settings, prompts="delta")
    if spec.ending == "running":
        return
    steps: list[HistoryStep] = []
    turns: list[Turn] = []
    before: list[ChatMessage] = []
    for step in range(1, spec.turns + 1):
        call = f"{run}-call-{step}"
        final = step == spec.turns
        prompt = render_policy_prompt(question, tools=["python_code"], history=steps, history_length=spec.turns,
                                      force_answer=final, system_prompt="You solve math problems.")
        change = delta_messages(before, prompt) if before else None
        delta = None if change is None else PromptDelta(base_call=f"{run}-call-{step - 1}", kept=change.kept,
                                                         messages=change.messages)
        reply = (f"Step {step}: the answer is 42. <answer>\\boxed{{42}}</answer>" if final
                 else f"Step {step}: let me compute.\n<python_code>print({len(run)} * 7 + {step})</python_code>")
        yield ModelCallRequested(event_id=f"{call}-req", run_id=run, occurred_at=clock(), call_id=call,
                                 role="policy", step=step, messages=prompt, prompt_delta=delta, model=spec.model)
        yield ModelResponded(event_id=f"{call}-resp", run_id=run, occurred_at=clock(), call_id=call, role="policy",
                             step=step, text=reply, model=spec.model, finish_reason="stop")
        observation = None
        if final:
            yield ActionParsed(event_id=f"{call}-act", run_id=run, occurred_at=clock(), call_id=call, role="policy",
                               step=step, kind="answer", action=reply, valid=True, answer="42")
        else:
            result = str(len(run) * 7 + step)
            observation = tool_response(result)
            yield ActionParsed(event_id=f"{call}-act", run_id=run, occurred_at=clock(), call_id=call, role="policy",
                               step=step, kind="tool", action=reply, valid=True, tool="python_code",
                               tool_input=f"print({len(run)} * 7 + {step})")
            yield ToolCallRequested(event_id=f"{call}-tool", run_id=run, occurred_at=clock(), call_id=call,
                                    role="policy", step=step, tool="python_code",
                                    input=f"print({len(run)} * 7 + {step})")
            yield ToolReturned(event_id=f"{call}-ret", run_id=run, occurred_at=clock(), call_id=call, role="policy",
                               step=step, tool="python_code", result=result, score=1.0)
        turns.append(Turn(step=step, prompt=prompt, response=reply, observation=observation,
                          tool=None if final else "python_code"))
        steps.append(HistoryStep(action=reply, observation=observation or ""))
        before = prompt
    yield from _ending(spec, clock, turns)


def _ending(spec: RunSpec, clock: _Clock, turns: list[Turn]) -> Iterator[Event]:
    run = spec.run_id
    if spec.ending == "failed":
        yield RunFailed(event_id=f"{run}-failed", run_id=run, occurred_at=clock(), reason="model server unreachable")
        return
    if spec.ending == "cancelled":
        yield RunCancelled(event_id=f"{run}-cancelled", run_id=run, occurred_at=clock(), reason="asked", by="bench")
        return
    yield AnswerGraded(event_id=f"{run}-graded", run_id=run, occurred_at=clock(), step=spec.turns, answer="42",
                       score=spec.score, method="numeric", ground_truth="42", grader="math", grader_version="1")
    yield EpisodeEnded(event_id=f"{run}-ended", run_id=run, occurred_at=clock(), done_reason="answer",
                       reward=spec.score, steps=spec.turns, invalid_turns=0, answer="42")
    yield TrajectorySealed(event_id=f"{run}-sealed", run_id=run, occurred_at=clock(), problem_id=f"p-{run}",
                           group_id=run, sample_index=0, data_source=spec.dataset, turns=turns, reward=spec.score,
                           score=spec.score, done_reason="answer", invalid_turns=0, model=spec.model)
    yield RunCompleted(event_id=f"{run}-completed", run_id=run, occurred_at=clock(), done_reason="answer",
                       answer="42", score=spec.score)


class _Clock:
    """Event times a few milliseconds apart from ``start``."""

    def __init__(self, start: datetime) -> None:
        self.now = start

    def __call__(self) -> datetime:
        self.now += timedelta(milliseconds=5)
        return self.now
