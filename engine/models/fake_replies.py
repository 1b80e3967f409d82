"""Response bodies of the fake OpenAI-compatible server: completions, errors, faults."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import msgspec
from aiohttp import web


class CannedReply(msgspec.Struct, frozen=True, kw_only=True):
    """A planned successful reply with exactly these message fields."""

    content: str | None = ""
    reasoning_content: str | None = None
    finish_reason: str = "stop"


def content_of(message: dict[str, Any]) -> str:
    """Plain text of a message; content parts (``[{"type": "text", ...}]``) are joined."""
    content = message.get("content")
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def prompt_text(messages: list[dict[str, Any]]) -> str:
    """The prompt as one string; its UTF-8 bytes are the fake prompt tokens."""
    return "".join(f"{m.get('role', '')}: {content_of(m)}\n" for m in messages)


def completion_body(
    model: str, reply: CannedReply, body: dict[str, Any], *, prompt: list[dict[str, Any]]
) -> dict[str, Any]:
    """A chat completion for ``reply``, with logprobs and token ids when the request asks."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if reply.reasoning_content is not None:
        message["reasoning_content"] = reply.reasoning_content
    completion_ids = list((reply.content or "").encode())
    prompt_ids = list(prompt_text(prompt).encode())
    choice: dict[str, Any] = {"index": 0, "message": message, "finish_reason": reply.finish_reason}
    if body.get("logprobs"):
        tokens = [
            {"token": f"token_id:{i}", "logprob": -0.25, "top_logprobs": []} for i in completion_ids
        ]
        choice["logprobs"] = {"content": tokens}
    result: dict[str, Any] = {
        "id": f"chatcmpl-fake-{time.monotonic_ns()}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [choice],
        "usage": {
            "prompt_tokens": len(prompt_ids),
            "completion_tokens": len(completion_ids),
            "total_tokens": len(prompt_ids) + len(completion_ids),
        },
    }
    if body.get("return_token_ids"):
        choice["token_ids"] = completion_ids
        result["prompt_token_ids"] = prompt_ids
    return result


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    """A JSON response encoded with msgspec."""
    body = msgspec.json.encode(data)
    return web.Response(body=body, status=status, headers=headers, content_type="application/json")


def error_response(
    status: int, message: str, headers: dict[str, str] | None = None
) -> web.Response:
    """An error in the shape vLLM's OpenAI server uses."""
    kind = {400: "BadRequestError", 404: "NotFoundError", 429: "RateLimitError"}.get(status, "InternalServerError")
    payload = {"object": "error", "message": message, "type": kind, "param": None, "code": status}
    return json_response(payload, status, headers)


def context_length_error(
    limit: int, prompt_tokens: int, max_tokens: int, wording: str = "vllm"
) -> web.Response:
    """A 400 saying the request does not fit the context, as the server named by ``wording`` says it."""
    total = prompt_tokens + max_tokens
    if wording == "llamacpp":
        message = f"request ({total} tokens) exceeds the available context size ({limit} tokens), try increasing it"
        error = {"code": 400, "message": message, "type": "exceed_context_size_error",
                 "n_prompt_tokens": total, "n_ctx": limit}  # fmt: skip
        return json_response({"error": error}, 400)
    if wording == "openai":
        message = (
            f"This model's maximum context length is {limit} tokens. However, your messages resulted in "
            f"{total} tokens. Please reduce the length of the messages."
        )
        error = {"message": message, "type": "invalid_request_error", "param": "messages",
                 "code": "context_length_exceeded"}  # fmt: skip
        return json_response({"error": error}, 400)
    if wording == "sglang":
        message = (
            f"Requested token count exceeds the model's maximum context length of {limit} tokens. You requested "
            f"a total of {total} tokens: {prompt_tokens} tokens from the input messages and {max_tokens} tokens "
            "for the completion. Please reduce the number of tokens in the input messages or the completion."
        )
        return error_response(400, message)
    message = (
        f"This model's maximum context length is {limit} tokens. However, you requested "
        f"{total} tokens ({prompt_tokens} in the messages, {max_tokens} "
        "in the completion). Please reduce the length of the messages or completion."
    )
    return error_response(400, message)


CONTEXT_WORDINGS = ("vllm", "sglang", "llamacpp", "openai")
"""The servers whose context-overflow error the fake server can speak (``context_wording``)."""


def _raw(body: bytes) -> web.Response:
    return web.Response(body=body, content_type="application/json")


def _bare_completion(message: dict[str, Any] | None) -> web.Response:
    choices = [] if message is None else [{"index": 0, "message": message, "finish_reason": "stop"}]
    body = {"id": "chatcmpl-fake", "object": "chat.completion", "model": "fake", "choices": choices}
    return json_response(body)


FAULT_RESPONSES: dict[str, Callable[[], web.Response]] = {
    "http_500": lambda: error_response(500, "the fake server failed on purpose"),
    "http_503": lambda: error_response(503, "the fake server is unavailable on purpose"),
    "http_429": lambda: error_response(
        429, "the fake server is rate limiting", {"Retry-After": "0"}
    ),
    "context_length": lambda: context_length_error(4096, 4000, 1000),
    "bad_request": lambda: error_response(400, "the fake server rejects this request on purpose"),
    "garbage_json": lambda: _raw(b'{"choices": [{"message": {"content": "unterminated'),
    "empty_choices": lambda: _bare_completion(None),
    "null_content": lambda: _bare_completion({"role": "assistant", "content": None}),
}
