"""The local_rag tool: observation shapes for good and garbage input."""

from __future__ import annotations

import json

import pytest

from engine.rag.request import MAX_TOP_K, RagRequest, parse_request
from engine.testing.harness import tool_options
from engine.tools.local_rag import LocalRagTool


@pytest.fixture
def tool(small_kb):
    rag = LocalRagTool(kb=small_kb)
    yield rag
    rag.close()


async def _run(tool: LocalRagTool, body: str, settings: dict | None = None) -> tuple[dict, float]:
    result = await tool.run(body, tool_options(**{"enable_local_rag": True, **(settings or {})}))
    return json.loads(result.text), result.score


async def test_valid_query_returns_success_with_qualified_names(tool) -> None:
    """A good request succeeds with score 1 and hits naming their qualified names."""
    body = json.dumps({"repo_name": "math", "query": "binomial coefficient", "top_k": 2})
    payload, score = await _run(tool, body)
    assert score == 1
    assert list(payload) == ["result", "status"]
    assert payload["status"] == "success"
    assert "math.comb" in payload["result"]
    assert "signature: comb(n, k" in payload["result"]


@pytest.mark.parametrize(
    "body",
    ["{not json", "repo_name = math", "\x00\x01", '{"repo_name": "math", "query": "x"'],
)
async def test_invalid_json_gives_failed_observation(tool, body) -> None:
    """Unparseable bodies become a failed observation with score 0."""
    payload, score = await _run(tool, body)
    assert score == 0
    assert payload["status"] == "failed"
    assert payload["result"] == f"Error: {payload['error']}"
    assert "Invalid JSON" in payload["error"]


@pytest.mark.parametrize("body", ["[1, 2]", '"sympy"', "42", "null", "true"])
async def test_non_object_json_gives_failed_observation(tool, body) -> None:
    """JSON that is not an object is explained, not crashed on."""
    payload, score = await _run(tool, body)
    assert score == 0
    assert payload["status"] == "failed"
    assert "must be a JSON object" in payload["error"]


@pytest.mark.parametrize(
    "body",
    [
        "",
        "   ",
        '{"repo_name": "math"}',
        '{"query": "gcd"}',
        '{"repo_name": "", "query": "x"}',
        '{"repo_name": "math", "query": "   "}',
        "{}",
    ],
)
async def test_missing_arguments_use_the_reference_error_shape(tool, body) -> None:
    """Missing repo_name or query gives the reference's 'both required' observation."""
    payload, score = await _run(tool, body)
    assert score == 0
    assert payload == {"result": "Both repo_name and query are required.", "status": "error"}


async def test_unknown_library_gives_clear_observation(tool) -> None:
    """An unsupported library names the supported ones."""
    payload, score = await _run(tool, '{"repo_name": "pandas", "query": "merge"}')
    assert score == 0
    assert payload["status"] == "failed"
    assert "Unsupported repository name" in payload["error"]
    assert "itertools" in payload["error"]


async def test_unexpected_keys_are_reported(tool) -> None:
    """Extra keys are named in the observation rather than raising TypeError."""
    body = '{"repo_name": "math", "query": "gcd", "filter": "x"}'
    payload, score = await _run(tool, body)
    assert score == 0
    assert "Unexpected keys: filter" in payload["error"]


@pytest.mark.parametrize("top_k", ["lots", 0, -3, True, 2.5, None, [3], {"k": 1}])
async def test_garbage_top_k_is_rejected(tool, top_k) -> None:
    """A top_k that is not a positive integer is explained with score 0."""
    body = json.dumps({"repo_name": "math", "query": "gcd", "top_k": top_k})
    payload, score = await _run(tool, body)
    assert score == 0
    assert "top_k" in payload["error"]


async def test_non_string_fields_are_rejected(tool) -> None:
    """repo_name and query must be strings."""
    payload, score = await _run(tool, '{"repo_name": ["math"], "query": 5}')
    assert score == 0
    assert payload["status"] == "failed"


async def test_huge_query_is_truncated_and_answered(tool) -> None:
    """A megabyte query is cut to a bounded length and still answered."""
    body = json.dumps({"repo_name": "math", "query": "gcd " * 250_000})
    payload, score = await _run(tool, body)
    assert score == 1
    assert "math.gcd" in payload["result"]


async def test_key_value_line_form_is_accepted(tool) -> None:
    """The 'key: value' lines from the reference docs work as well as JSON."""
    payload, score = await _run(tool, "repo_name: itertools\nquery: cartesian product\ntop_k: 2")
    assert score == 1
    assert "itertools.product" in payload["result"]


async def test_disabled_tool_answers_disabled(tool) -> None:
    """enable_local_rag false gives the disabled observation."""
    payload, score = await _run(
        tool, '{"repo_name": "math", "query": "gcd"}', {"enable_local_rag": False}
    )
    assert score == 0
    assert payload == {"result": "Local RAG is not enabled.", "status": "disabled"}


async def test_retrieval_exception_becomes_error_observation(tool, monkeypatch) -> None:
    """A crash inside retrieval is reported to the model, not raised."""

    def boom(*args, **kwargs):
        raise RuntimeError("index exploded")

    monkeypatch.setattr(tool.kb, "search", boom)
    payload, score = await _run(tool, '{"repo_name": "math", "query": "gcd"}')
    assert score == 0
    assert payload == {
        "result": "Exception during local_rag query: index exploded",
        "status": "error",
    }


def test_parse_request_normalises_library_and_clamps_top_k() -> None:
    """Library names are case-insensitive and top_k is capped."""
    parsed = parse_request('{"repo_name": " SymPy ", "query": "solve", "top_k": "500"}')
    assert parsed == RagRequest(library="sympy", query="solve", top_k=MAX_TOP_K)


def test_parse_request_uses_default_top_k() -> None:
    """Without top_k the caller's default applies."""
    parsed = parse_request('{"repo_name": "math", "query": "gcd"}', default_top_k=4)
    assert isinstance(parsed, RagRequest)
    assert parsed.top_k == 4


async def test_registry_closes_the_rag_tool_with_its_sync_close(small_kb) -> None:
    """Worker shutdown closes every tool; local_rag's close is synchronous and must not break it."""
    from engine.tools.registry import ToolRegistry

    rag = LocalRagTool(kb=small_kb)
    registry = ToolRegistry({"local_rag": rag})
    await registry.close()
    assert rag._executor._shutdown
