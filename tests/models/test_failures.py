"""Classifying failed attempts, in the wordings real servers use."""

from __future__ import annotations

from dataclasses import dataclass, field

import openai
import pytest

from engine.models.failures import CONTEXT_LENGTH_PHRASES, classify


@dataclass
class _Response:
    """Just what the SDK's status error reads from an HTTP response."""

    status_code: int
    headers: dict[str, str] = field(default_factory=dict)
    request: object = None


def _status_error(status: int, message: str, headers: dict[str, str] | None = None) -> Exception:
    response = _Response(status, headers or {})
    body = {"message": message}
    return openai.APIStatusError(f"Error code: {status}", response=response, body=body)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens "
        "(4000 in the messages, 1000 in the completion).",
        "'max_tokens' or 'max_completion_tokens' is too large: 8192. This model's maximum context "
        "length is 4096 tokens and your request has 120 input tokens (8192 > 4096 - 120).",
        "The decoder prompt (length 9000) is longer than the maximum model length of 8192.",
        "Input length (9000 tokens) exceeds the maximum allowed length (8192 tokens).",
        "Requested tokens exceed context window of 4096",
        "prompt is too long",
        "request (2090 tokens) exceeds the available context size (2048 tokens), try increasing it",
        "the request exceeds the available context size, try increasing it",
    ],
)
def test_context_length_wordings_are_recognised(message: str) -> None:
    """vLLM, SGLang, llama.cpp and OpenAI phrasings all count as context_length."""
    assert CONTEXT_LENGTH_PHRASES.search(message)
    failure = classify(_status_error(400, message))
    assert (failure.kind, failure.retryable) == ("context_length", False)


@pytest.mark.parametrize(
    ("status", "kind", "retryable"),
    [
        (400, "bad_response", False),
        (401, "bad_response", False),
        (404, "bad_response", False),
        (408, "timeout", True),
        (422, "bad_response", False),
        (429, "rate_limit", True),
        (500, "server_error", True),
        (502, "server_error", True),
        (503, "server_error", True),
    ],
)
def test_status_codes_map_to_kinds(status: int, kind: str, retryable: bool) -> None:
    """Only 408, 429 and 5xx are retried."""
    failure = classify(_status_error(status, "something went wrong"))
    assert (failure.kind, failure.retryable) == (kind, retryable)
    assert "something went wrong" in failure.message


def test_retry_after_is_read_and_garbage_is_ignored() -> None:
    """A numeric Retry-After is honoured; a malformed one is ignored."""
    assert classify(_status_error(429, "slow", {"retry-after": "1.5"})).retry_after == 1.5
    assert classify(_status_error(429, "slow", {"retry-after": "soon"})).retry_after is None
    assert classify(_status_error(429, "slow", {"retry-after": "-3"})).retry_after is None


def test_timeouts_and_unknown_exceptions() -> None:
    """asyncio timeouts are retryable timeouts; anything unexpected is a bad_response."""
    assert classify(TimeoutError()).kind == "timeout"
    unknown = classify(KeyError("choices"))
    assert (unknown.kind, unknown.retryable) == ("bad_response", False)


def _chained(outer: BaseException, inner: BaseException) -> BaseException:
    try:
        try:
            raise inner
        except BaseException as caught:
            raise outer from caught
    except BaseException as raised:  # noqa: BLE001 - returned with its chain
        return raised


def test_a_connect_timeout_over_a_refused_connection_is_a_connection_failure() -> None:
    """The aiohttp transport calls a refused connection a timeout; the chain says otherwise."""
    sdk_timeout = openai.APITimeoutError(request=None)  # type: ignore[arg-type]
    refused = _chained(sdk_timeout, ConnectionRefusedError(111, "Connect call failed"))
    failure = classify(refused)
    assert (failure.kind, failure.retryable) == ("connection", True)
    slow = _chained(openai.APITimeoutError(request=None), TimeoutError("read timed out"))  # type: ignore[arg-type]
    assert classify(slow).kind == "timeout"


def test_our_own_attempt_timeout_stays_a_timeout_whatever_lies_beneath() -> None:
    """A cancelled attempt may have been handling a socket error: it is still a timeout."""
    failure = classify(_chained(TimeoutError(), OSError(104, "Connection reset by peer")))
    assert (failure.kind, failure.retryable) == ("timeout", True)


@pytest.mark.parametrize("outer", [openai.APITimeoutError(request=None),  # type: ignore[arg-type]
                                   openai.APIConnectionError(request=None)],  # type: ignore[arg-type]
                         ids=["aiohttp_connect_timeout", "httpx_connect_error"])
def test_a_refused_connection_is_called_refused_whatever_the_transport_calls_it(outer: BaseException) -> None:
    """aiohttp says ConnectTimeout, httpx "All connection attempts failed": the message says refused."""
    failure = classify(_chained(outer, ConnectionRefusedError(111, "Connect call failed ('127.0.0.1', 9)")))
    assert failure.kind == "connection"
    assert "connection refused" in failure.message
    assert "Connect call failed ('127.0.0.1', 9)" in failure.message
    assert "imeout" not in failure.message
