"""local_rag's optional query rewrite and hit summary: recorded model calls, replayable."""

from __future__ import annotations

import json
from typing import Any

from engine.app.operations import submission
from engine.testing.harness import make_settings, new_memory_log, run_until_done, services
from events import (
    ActionParsed,
    ModelCallFailed,
    ModelCallRequested,
    ModelResponded,
    ToolCallRequested,
    TrajectorySealed,
)
from handlers.ports import ToolOptions, ToolResult
from replay.verify import verify_run
from tests.evolve.support import RoleModel, of

HITS = "[1] math.comb (function)\nsignature: comb(n, k, /)\nNumber of ways to choose k items from n."
RAG_CALL = '<local_rag>{"repo_name": "math", "query": "how many ways to pick 2 of 5 things"}</local_rag>'


class FakeRag:
    """A local_rag tool with canned hits that records the bodies it was given."""

    name = "local_rag"

    def __init__(self) -> None:
        self.bodies: list[str] = []

    async def run(self, tool_input: str, options: ToolOptions) -> ToolResult:
        self.bodies.append(tool_input)
        return ToolResult(text=json.dumps({"result": HITS, "status": "success"}), score=1.0)


def scripted(rewrite: str = "binomial coefficient", summary: str = "Use math.comb(5, 2).", policy=None):
    """Policy: a local_rag call, then the answer; helper roles reply with the given texts."""
    policy = policy or [RAG_CALL, "<answer>\\boxed{10}</answer>"]

    def reply(role: str, prompt: str, number: int) -> str:
        if role == "policy":
            return policy[min(number, len(policy) - 1)]
        return {"rag_rewriter": rewrite, "rag_summarizer": summary}[role]

    return RoleModel(reply)


async def run_episode(model: RoleModel, rag: FakeRag, **episode: Any):
    settings = make_settings({"episode": {"enable_local_rag": True, **episode}})
    log = new_memory_log()
    svc = services(settings, models=model, tools={"local_rag": rag})
    await log.append(submission("r-rag", "How many ways to choose 2 of 5?", ground_truth="10"))
    await run_until_done(log, svc, ["r-rag"])
    records = await log.read_run("r-rag")
    return [r.event for r in records], records


async def test_rewritten_query_is_searched_and_summary_becomes_the_observation() -> None:
    """Rewrite, search with the rewrite, summarise; the policy reads the summary, not the raw hits."""
    model, rag = scripted(), FakeRag()
    events, records = await run_episode(model, rag, rag_rewrite_query=True, rag_summarize=True)

    assert [c.role for c in model.calls] == ["policy", "rag_rewriter", "rag_summarizer", "policy"]
    assert json.loads(rag.bodies[0]) == {"repo_name": "math", "query": "binomial coefficient"}
    rewrite_prompt, summary_prompt, second_policy = (c.prompt for c in model.calls[1:])
    assert "how many ways to pick 2 of 5 things" in rewrite_prompt and "math" in rewrite_prompt
    assert "math.comb" in summary_prompt and "how many ways to pick 2 of 5 things" in summary_prompt
    assert "Use math.comb(5, 2)." in second_policy
    assert "Number of ways to choose k items" not in second_policy

    helper_requests = [e for e in of(events, ModelCallRequested) if e.role != "policy"]
    assert [(e.role, e.purpose, e.step) for e in helper_requests] == [
        ("rag_rewriter", "rag_rewrite", 1), ("rag_summarizer", "rag_summarize", 1)]
    [sealed] = of(events, TrajectorySealed)
    assert [t.step for t in sealed.turns] == [1, 2]  # helper calls are not turns
    assert "Use math.comb(5, 2)." in sealed.turns[0].observation
    assert sealed.score == 1.0
    assert (await verify_run(records)).ok


async def test_failed_rewrite_searches_with_the_models_own_query() -> None:
    """A rewrite call that fails for good is recorded, and the search uses the original query."""
    model, rag = scripted(rewrite="!fail"), FakeRag()
    events, records = await run_episode(model, rag, rag_rewrite_query=True)

    assert [e.role for e in of(events, ModelCallFailed)] == ["rag_rewriter"]
    assert json.loads(rag.bodies[0])["query"] == "how many ways to pick 2 of 5 things"
    assert of(events, TrajectorySealed)[0].done_reason == "answer"
    assert (await verify_run(records)).ok


async def test_empty_summary_keeps_the_raw_hits_as_the_observation() -> None:
    """A summariser with nothing to say (or only reasoning) leaves the hits for the policy."""
    model, rag = scripted(summary="<think>not sure</think>\n"), FakeRag()
    events, _ = await run_episode(model, rag, rag_summarize=True)

    assert [c.role for c in model.calls] == ["policy", "rag_summarizer", "policy"]
    assert "Number of ways to choose k items" in model.calls[-1].prompt
    assert of(events, TrajectorySealed)[0].turns[0].observation.count("math.comb") == 1


async def test_failed_summary_keeps_the_raw_hits_and_the_episode_goes_on() -> None:
    """A summary call that fails for good does not end the episode."""
    model, rag = scripted(summary="!fail"), FakeRag()
    events, records = await run_episode(model, rag, rag_summarize=True)

    assert [e.role for e in of(events, ModelCallFailed)] == ["rag_summarizer"]
    assert "Number of ways to choose k items" in model.calls[-1].prompt
    assert of(events, TrajectorySealed)[0].done_reason == "answer"
    assert (await verify_run(records)).ok


async def test_helper_calls_are_off_by_default() -> None:
    """Without the options the tool gets the model's body verbatim and no helper model is asked."""
    model, rag = scripted(), FakeRag()
    await run_episode(model, rag)

    assert [c.role for c in model.calls] == ["policy", "policy"]
    assert rag.bodies == ['{"repo_name": "math", "query": "how many ways to pick 2 of 5 things"}']


async def test_malformed_body_skips_the_rewrite_and_reaches_the_tool_unchanged() -> None:
    """A body that is not a JSON request is the tool's to judge; no rewrite is attempted."""
    bad = "<local_rag>repo_name: math\nquery</local_rag>"
    model, rag = scripted(policy=[bad, "<answer>\\boxed{10}</answer>"]), FakeRag()
    events, _ = await run_episode(model, rag, rag_rewrite_query=True)

    assert [c.role for c in model.calls] == ["policy", "policy"]
    assert rag.bodies == ["repo_name: math\nquery"]
    assert of(events, ToolCallRequested)[0].input == "repo_name: math\nquery"


async def test_failed_search_is_not_summarised() -> None:
    """Only successful hits are summarised; an error observation goes straight to the policy."""

    class BrokenRag(FakeRag):
        async def run(self, tool_input: str, options: ToolOptions) -> ToolResult:
            return ToolResult(text=json.dumps({"result": "Error: unknown library", "status": "failed"}), score=0.0)

    model = scripted()
    await run_episode(model, BrokenRag(), rag_summarize=True)
    assert [c.role for c in model.calls] == ["policy", "policy"]


async def test_evolve_policy_and_verifier_episodes_use_the_helper_calls() -> None:
    """In an evolve round both the policy's and the verifiers' searches are rewritten and summarised."""
    calls = {"policy": 0}

    def reply(role: str, prompt: str, number: int) -> str:
        if role == "policy":
            calls["policy"] += 1
            return RAG_CALL if number == 0 else "<answer>\\boxed{10}</answer>"
        if role == "summarizer":
            return "**Strategy:** looked it up"
        if role == "verifier":
            return RAG_CALL if "Use math.comb" not in prompt else "<report>fine \\boxed{1}</report>"
        if role == "rag_rewriter":
            return "binomial coefficient"
        if role == "rag_summarizer":
            return "Use math.comb(5, 2)."
        return "<report>merged \\boxed{1}</report>"

    model = RoleModel(reply)
    settings = {
        "episode": {"enable_local_rag": True, "rag_rewrite_query": True, "rag_summarize": True},
        "evolve": {"rounds": 1, "verifiers": 1, "verifier_episode": {"enable_local_rag": True}},
    }
    log = new_memory_log()
    rag = FakeRag()
    svc = services(make_settings(settings), models=model, tools={"local_rag": rag})
    await log.append(submission("r-evo-rag", "How many ways to choose 2 of 5?", ground_truth="10", workflow="evolve"))
    await run_until_done(log, svc, ["r-evo-rag"])
    records = await log.read_run("r-evo-rag")
    events = [r.event for r in records]

    roles = [c.role for c in model.calls]
    assert roles.count("rag_rewriter") == 2 and roles.count("rag_summarizer") == 2
    assert all(json.loads(body)["query"] == "binomial coefficient" for body in rag.bodies)
    assert {e.role for e in of(events, ActionParsed) if e.tool == "local_rag"} == {"policy", "verifier"}
    assert all(e.role == "rag_summarizer" for e in of(events, ModelResponded) if "math.comb(5" in e.text)
    assert (await verify_run(records)).ok


async def test_garbage_rewrite_replies_fall_back_to_the_models_own_query() -> None:
    """A rewrite that is only reasoning, only quotes or blank leaves the query as the model wrote it."""
    for garbage in ("<think>never finished", '  ""  \n', "<think>x</think>\n\n"):
        model, rag = scripted(rewrite=garbage), FakeRag()
        events, records = await run_episode(model, rag, rag_rewrite_query=True)
        assert json.loads(rag.bodies[0])["query"] == "how many ways to pick 2 of 5 things", garbage
        assert of(events, TrajectorySealed)[0].done_reason == "answer"
        assert (await verify_run(records)).ok
