"""Sorting a failed model call into a :data:`ModelFailureKind` and deciding whether to retry."""

from __future__ import annotations

import re
from typing import NamedTuple

import aiohttp
import openai

from events.model import ModelFailureKind

CONTEXT_LENGTH_PHRASES = re.compile(
    r"context length|context_length|maximum context|context window|max(?:imum)? model length"
    r"|too many tokens|prompt is too long|is too long and exceeds"
    r"|exceeds the maximum (?:allowed )?(?:length|number of tokens)"
    r"|exceeds the available context size|context size|exceed_context_size",
    re.IGNORECASE,
)
"""How vLLM, SGLang, llama.cpp and OpenAI say that a request does not fit the context."""

CONTEXT_LENGTH_CODES = frozenset({"context_length_exceeded", "exceed_context_size_error"})
"""The error ``code`` (OpenAI) or ``type`` (llama.cpp) naming the same thing, whatever the message."""


_PERMANENT_CONNECTION_ERRORS = frozenset({"UnsupportedProtocol", "InvalidURL"})
"""Transport errors (by class name, as the SDK's HTTP library varies) caused by the URL."""


class Failure(NamedTuple):
    """One classified failure of one attempt."""

    kind: ModelFailureKind
    retryable: bool
    message: str
    retry_after: float | None = None
    """Seconds the server asked us to wait (``Retry-After``), if it said."""


def classify(exc: BaseException) -> Failure:
    """Classify an exception raised by one attempt of a chat completion call."""
    if isinstance(exc, openai.APITimeoutError) and _refused(exc):
        return Failure("connection", True, _unreachable(exc))
    if isinstance(exc, TimeoutError | openai.APITimeoutError):
        return Failure("timeout", True, "the model server did not answer in time")
    if isinstance(exc, openai.APIConnectionError):
        # A malformed URL will not get better by retrying; a refused connection might.
        retryable = type(exc.__cause__).__name__ not in _PERMANENT_CONNECTION_ERRORS
        return Failure("connection", retryable, _unreachable(exc))
    if isinstance(exc, openai.APIStatusError):
        return _classify_status(exc)
    if type(exc).__name__ in _PERMANENT_CONNECTION_ERRORS:
        return Failure("connection", False, f"bad model server URL: {exc}")
    return Failure("bad_response", False, f"{type(exc).__name__}: {exc}")


def _classify_status(exc: openai.APIStatusError) -> Failure:
    status = exc.status_code
    text = _status_text(exc)
    if status == 429:
        return Failure("rate_limit", True, text, _retry_after(exc))
    if status >= 500:
        return Failure("server_error", True, text)
    if status == 408:
        return Failure("timeout", True, text)
    if CONTEXT_LENGTH_PHRASES.search(text) or _context_code(exc.body):
        return Failure("context_length", False, text)
    return Failure("bad_response", False, text)


def _context_code(body: object) -> bool:
    """Whether the error body's ``code`` or ``type`` says the request does not fit the context."""
    if not isinstance(body, dict):
        return False
    return any(isinstance(body.get(key), str) and body[key] in CONTEXT_LENGTH_CODES for key in ("code", "type"))


def _status_text(exc: openai.APIStatusError) -> str:
    """The server's own error message when it gave one, else the SDK's summary."""
    body = exc.body
    if isinstance(body, dict) and isinstance(body.get("message"), str):
        return f"HTTP {exc.status_code}: {body['message']}"
    if isinstance(body, str) and body:
        return f"HTTP {exc.status_code}: {body[:500]}"
    return str(exc.message)


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after")
    if value is None:
        return None
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def _refused(exc: BaseException) -> bool:
    """Whether the failure underneath is a connection that could not be made.

    The SDK's aiohttp transport reports a refused connection, or one the server
    dropped, as a connect timeout; the error at the bottom of the chain tells them apart.
    """
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        seen.add(id(cause))
        if isinstance(cause, OSError | aiohttp.ClientConnectionError) and not isinstance(cause, TimeoutError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _unreachable(exc: BaseException) -> str:
    """Why no connection was made: a refusal is named as one (the transports call it a
    connect timeout or "all connection attempts failed"), anything else by its cause."""
    refused = _in_chain(exc, ConnectionRefusedError)
    if refused is not None:
        return f"cannot reach the model server: connection refused ({refused.strerror or refused})"
    return f"cannot reach the model server: {_cause(exc)}"


def _in_chain(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    """The first exception of ``kind`` among ``exc`` and its causes."""
    seen: set[int] = set()
    cause: BaseException | None = exc
    while cause is not None and id(cause) not in seen:
        if isinstance(cause, kind):
            return cause
        seen.add(id(cause))
        cause = cause.__cause__ or cause.__context__
    return None


def _cause(exc: BaseException) -> str:
    cause = exc.__cause__ or exc.__context__
    return f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
