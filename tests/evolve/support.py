"""Fakes and helpers for evolve workflow tests: role-aware scripted models."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.app.operations import submission
from engine.testing.harness import (
    EchoPython,
    make_settings,
    new_memory_log,
    run_until_done,
    services,
)
from events import ChatMessage, SamplingParams
from events.base import Event
from handlers.ports import ModelError, ModelReply
from handlers.run_settings import ModelSpec

Reply = Callable[[str, str, int], str]
"""(role, prompt text, call number of that role) -> reply text."""


@dataclass
class Call:
    role: str
    prompt: str
    started: float
    ended: float
    branch: str | None = None


@dataclass
class RoleModel:
    """Answers by role; records every call with its time interval."""

    reply: Reply
    latency: float = 0.0
    calls: list[Call] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)

    def client_for(self, role: str, spec: ModelSpec, *, branch: str | None = None) -> _Client:
        return _Client(self, role, branch)


@dataclass
class _Client:
    owner: RoleModel
    role: str
    branch: str | None

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> ModelReply:
        started = time.perf_counter()
        prompt = "\n".join(m.content for m in messages)
        number = self.owner.counts.get(self.role, 0)
        self.owner.counts[self.role] = number + 1
        if self.owner.latency:
            await asyncio.sleep(self.owner.latency)
        text = self.owner.reply(self.role, prompt, number)
        self.owner.calls.append(Call(self.role, prompt, started, time.perf_counter(), self.branch))
        if text == "!fail":
            raise ModelError("server_error", "scripted failure")
        return ModelReply(text=text, model=f"fake-{self.role}")


def standard_reply(answers: Sequence[str] = ("42",), verdicts: Sequence[str] = ("1",)) -> Reply:
    """Policy answers from ``answers`` (one per policy call, last repeats); verifiers vote in turn."""

    def reply(role: str, prompt: str, number: int) -> str:
        if role == "policy":
            answer = answers[min(number, len(answers) - 1)]
            return f"<think>try</think><answer>\\boxed{{{answer}}}</answer>"
        if role == "summarizer":
            return f"**Strategy:** brief {number}"
        if role == "verifier":
            verdict = verdicts[number % len(verdicts)]
            return (
                f"<report>checked {number}. \\boxed{{{verdict}}}</report>"
                if verdict in "01"
                else verdict
            )
        return "<report>merged report \\boxed{1}</report>"

    return reply


async def run_evolve(
    model: RoleModel,
    *,
    question: str = "What is 6 times 7?",
    answer: str | None = "42",
    run_id: str = "r-evo",
    concurrency: int = 64,
    **settings: Any,
) -> list[Event]:
    """One evolve run through the real routing table; returns its events."""
    records = await run_evolve_records(
        model, question=question, answer=answer, run_id=run_id, concurrency=concurrency, **settings
    )
    return [record.event for record in records]


async def run_evolve_records(
    model: RoleModel,
    *,
    question: str = "What is 6 times 7?",
    answer: str | None = "42",
    run_id: str = "r-evo",
    concurrency: int = 64,
    tools: dict[str, Any] | None = None,
    **settings: Any,
) -> list[Any]:
    """Like :func:`run_evolve`, returning the recorded log entries (for ``replay.verify``)."""
    log = new_memory_log()
    svc = services(
        make_settings(settings or None), models=model, tools=tools or {"python_code": EchoPython()}
    )
    await log.append(submission(run_id, question, ground_truth=answer, workflow="evolve"))
    await run_until_done(log, svc, [run_id], concurrency=concurrency)
    return list(await log.read_run(run_id))


def of(events: Sequence[Event], event_type: type) -> list[Any]:
    return [e for e in events if isinstance(e, event_type)]
