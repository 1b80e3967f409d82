"""A verifier's tool calls follow the verifier episode's own switches and timeout (issue 21 §3)."""

from __future__ import annotations

import json
from typing import Any

import msgspec

from engine.app.operations import submission
from engine.testing.harness import make_settings, new_memory_log, run_until_done, services
from events import ToolReturned, VerifierReported
from handlers.ports import ToolOptions, ToolResult
from tests.evolve.support import RoleModel, of


class RecordingPython:
    """A python tool that records the settings each call saw."""

    name = "python_code"

    def __init__(self) -> None:
        self.seen: list[dict[str, Any]] = []

    async def run(self, tool_input: str, options: ToolOptions) -> ToolResult:
        self.seen.append(msgspec.to_builtins(options.episode))
        text = json.dumps({"result": "RESULT=42\n", "stderr": "", "status": "success", "returncode": 0})
        return ToolResult(text=text, score=1.0)


def code_first(role: str, prompt: str, number: int) -> str:
    """Every role writes code first, then answers (policy) or reports (verifier)."""
    if role in ("policy", "verifier") and "RESULT=42" not in prompt:
        return "<python_code>print(6*7)</python_code>"
    if role == "policy":
        return "<answer>\\boxed{42}</answer>"
    if role == "verifier":
        return "<report>the code agrees. \\boxed{1}</report>"
    return "**Strategy:** multiply"


async def run_with(tool: RecordingPython, **settings: Any) -> list[Any]:
    """One evolve run with ``tool`` as its python tool; returns its events."""
    log = new_memory_log()
    svc = services(make_settings(settings), models=RoleModel(code_first), tools={"python_code": tool})
    await log.append(submission("r-tools", "What is 6 times 7?", ground_truth="42", workflow="evolve"))
    await run_until_done(log, svc, ["r-tools"])
    return [record.event for record in await log.read_run("r-tools")]


async def test_verifier_runs_python_when_only_the_policy_has_it_off() -> None:
    """Python off for the policy and on for the verifiers: the verifiers' code runs, with their timeout."""
    tool = RecordingPython()
    events = await run_with(
        tool,
        episode={"enable_python_code": False, "python_code_timeout": 5},
        evolve={"rounds": 1, "verifiers": 2,
                "verifier_episode": {"enable_python_code": True, "python_code_timeout": 7}},
    )
    results = [r for r in of(events, ToolReturned) if r.role == "verifier"]
    assert len(results) == 2 and all("not enabled" not in r.result for r in results)
    policy = [r for r in of(events, ToolReturned) if r.role == "policy"]
    assert policy and all("not enabled" in r.result for r in policy)  # the policy's switch still holds
    assert [s["python_code_timeout"] for s in tool.seen] == [7, 7]
    assert [r.judgment for r in of(events, VerifierReported)] == [1, 1]


async def test_policy_python_does_not_leak_into_verifiers_that_have_it_off() -> None:
    """Python on for the policy only: its code runs with its timeout; the verifiers' calls are refused."""
    tool = RecordingPython()
    events = await run_with(
        tool,
        episode={"enable_python_code": True, "python_code_timeout": 5},
        evolve={"rounds": 1, "verifiers": 1,
                "verifier_episode": {"enable_python_code": False, "max_steps": 2}},
    )
    assert [s["python_code_timeout"] for s in tool.seen] == [5]  # the policy's call only
    verifier = [r for r in of(events, ToolReturned) if r.role == "verifier"]
    assert verifier and all("not enabled" in r.result for r in verifier)


class FailingPython(RecordingPython):
    """A python tool whose every run fails (score 0)."""

    async def run(self, tool_input: str, options: ToolOptions) -> ToolResult:
        self.seen.append(msgspec.to_builtins(options.episode))
        text = json.dumps({"result": "NameError: x", "stderr": "", "status": "error", "returncode": 1})
        return ToolResult(text=text, score=0.0)


async def test_the_rag_hint_after_failed_code_follows_the_verifiers_own_rag_switch() -> None:
    """Retrieval on for the verifiers only: their failed code gets the RAG hint; the policy's does not."""
    from handlers.episode.observations import RAG_HINT
    from handlers.evolve.plan import episode_id
    from handlers.projections.episode import episode_state

    events = await run_with(
        FailingPython(),
        episode={"enable_python_code": True, "enable_local_rag": False, "max_steps": 2},
        evolve={"rounds": 1, "verifiers": 1,
                "verifier_episode": {"enable_python_code": True, "enable_local_rag": True, "max_steps": 2}},
    )
    hint = RAG_HINT.split("\n")[0]
    verifier = episode_state(events, episode_id(None, 0, "verifier", 0))
    policy = episode_state(events, episode_id(None, 0, "policy"))
    assert hint in (verifier.steps[0].observation or "")
    assert hint not in (policy.steps[0].observation or "")
