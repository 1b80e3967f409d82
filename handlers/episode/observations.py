"""What the model is shown after a turn: tool responses and protocol errors."""

from __future__ import annotations

import json

RAG_HINT = (
    "Tip: the local_rag tool can look up the documentation of the library you used; "
    "query it to find the right function or usage before retrying."
)


def tool_response(result_json: str) -> str:
    """Wrap a tool's JSON result the way prompts show it."""
    return f"<tool_response>{result_json}</tool_response>"


def tool_failure(error: str) -> str:
    """A tool that could not run at all, as a tool response the model can read."""
    return tool_response(json.dumps({"result": f"Error: {error}", "status": "error"}))


def with_rag_hint(result_json: str) -> str:
    """Append the retrieval suggestion to a failed python result (keeps it valid JSON)."""
    try:
        payload = json.loads(result_json)
    except ValueError:
        return f"{result_json}\n{RAG_HINT}"
    if not isinstance(payload, dict):
        return result_json
    payload["result"] = f"{payload.get('result', '')}\n\n{RAG_HINT}"
    return json.dumps(payload)
