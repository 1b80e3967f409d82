"""A local_rag episode with query rewrite and summary over real NATS, HTTP and the real KB."""

from __future__ import annotations

import json

from engine.app.operations import submission
from engine.models.fake_server import FakeOpenAIServer
from engine.models.router import ModelRouter
from engine.testing.harness import make_settings, run_until_done, services
from engine.tools.local_rag import LocalRagTool
from events import ModelCallRequested, ToolCallRequested, ToolReturned, TrajectorySealed
from replay.verify import verify_run


def _model(messages: list[dict]) -> str:
    """One fake server plays all three roles, told apart by their prompts."""
    system = messages[0]["content"] if messages[0]["role"] == "system" else ""
    if "documentation search query" in system:
        return "<think>they want a combination count</think>\nnumber of combinations without repetition"
    if "excerpts from a library's documentation" in system:
        return "Call math.comb(n, k): the number of ways to choose k items from n without order."
    if "math.comb(n, k)" in messages[-1]["content"]:
        return "<answer>\\boxed{10}</answer>"
    return '<local_rag>{"repo_name": "math", "query": "how many ways can I pick 2 of 5 things"}</local_rag>'


async def test_rag_episode_records_rewrite_search_and_summary_and_replays_without_calls(
    jetstream_log, small_kb
) -> None:
    """Every helper call is an HTTP call recorded on the bus; verification then makes none."""
    async with FakeOpenAIServer(_model) as server:
        raw = {
            "models": {"policy": {"base_url": server.base_url, "model": "fake-model", "max_retries": 0}},
            "episode": {"enable_local_rag": True, "enable_python_code": False,
                        "rag_rewrite_query": True, "rag_summarize": True},
        }
        router = ModelRouter()
        tool = LocalRagTool(kb=small_kb)
        try:
            svc = services(make_settings(raw), models=router, tools={"local_rag": tool})
            await jetstream_log.append(submission("rag-run", "How many ways to choose 2 of 5?", ground_truth="10"))
            await run_until_done(jetstream_log, svc, ["rag-run"])
            records = await jetstream_log.read_run("rag-run")
            calls = server.requests_total
            result = await verify_run(records)
            assert server.requests_total == calls == 4  # policy, rewrite, summary, policy
        finally:
            tool.close()
            await router.close()

    events = [r.event for r in records]
    assert [e.role for e in events if isinstance(e, ModelCallRequested)] == [
        "policy", "rag_rewriter", "rag_summarizer", "policy"]
    [search] = [e for e in events if isinstance(e, ToolCallRequested)]
    assert json.loads(search.input)["query"] == "number of combinations without repetition"
    [hits] = [e for e in events if isinstance(e, ToolReturned)]
    assert "math.comb" in json.loads(hits.result)["result"]  # the real KB found it
    [sealed] = [e for e in events if isinstance(e, TrajectorySealed)]
    assert sealed.score == 1.0 and len(sealed.turns) == 2
    assert "Call math.comb(n, k)" in sealed.turns[0].observation
    assert result.ok and result.checked > 0
