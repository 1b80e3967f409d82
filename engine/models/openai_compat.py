"""The :class:`ModelClient` adapter for any OpenAI-compatible server (vLLM in production).

Example::

    async def main() -> None:
        client = OpenAICompatClient(ModelEndpoint(base_url="http://127.0.0.1:8000/v1",
                                                  model="qwen3-4b"))
        reply = await client.complete([ChatMessage(role="user", content="2+2?")],
                                      SamplingParams(temperature=0.0))
        print(reply.text, reply.attempts)
        await client.close()

The SDK's own retries are off: this module retries timeouts, connection errors, 429 and
5xx itself (exponential backoff with full jitter) so that every failure is classified
once and the number of attempts is known. A 4xx other than 429 is never retried.

The client is the largest CPU cost of a worker, so it takes the SDK's cheaper path
(``bench/model_client.py`` measures it): the SDK's aiohttp transport instead of its
default pool, which polls every idle connection on each request, and the SDK's raw
``post`` with a body already in wire form, which skips the per-field transform of
``chat.completions.create``. The path is given as an absolute URL, which the SDK takes as
it is instead of merging it with its base URL on every call. Status errors,
authentication and timeouts are the SDK's as before.
"""

from __future__ import annotations

import asyncio
import random
import time
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import httpx2
import msgspec
import openai

from engine.models.failures import Failure, classify
from engine.models.wire import decode_completion
from events.model import ChatMessage, SamplingParams
from handlers.ports import ModelError, ModelReply


class ModelEndpoint(msgspec.Struct, frozen=True, kw_only=True):
    """Where and how to reach one OpenAI-compatible model."""

    base_url: str
    """E.g. ``http://127.0.0.1:8000/v1``."""
    model: str
    """The served model name sent with every request."""
    api_key: str = "EMPTY"
    timeout: float = 300.0
    """Seconds one attempt may take before it counts as a timeout."""
    max_retries: int = 5
    """Retries after the first attempt (so at most ``max_retries + 1`` attempts)."""
    max_concurrency: int = 64
    """In-flight requests allowed per ``base_url``, shared by all clients of that URL."""
    backoff_base: float = 0.5
    backoff_max: float = 30.0
    extra_body: dict[str, Any] = {}
    """Extra JSON fields merged into every request body (server extensions)."""
    return_logprobs: bool = False
    """Ask for per-token logprobs (``logprobs=True``)."""
    return_token_ids: bool = False
    """Ask vLLM for prompt and completion token ids (``return_token_ids``)."""


_SEMAPHORES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[str, asyncio.Semaphore]] = (
    weakref.WeakKeyDictionary()
)


def endpoint_semaphore(base_url: str, limit: int) -> asyncio.Semaphore:
    """The concurrency limit shared by every client of ``base_url`` on the running loop.

    The first client to ask fixes the limit; semaphores are per event loop because an
    asyncio primitive cannot be shared between loops.
    """
    per_loop = _SEMAPHORES.setdefault(asyncio.get_running_loop(), {})
    key = base_url.rstrip("/")
    if key not in per_loop:
        per_loop[key] = asyncio.Semaphore(max(1, limit))
    return per_loop[key]


_AUTHENTICATED: openai.RequestOptions = {"security": {"bearer_auth": True}}
"""Request options of the SDK's raw ``post``: send the API key as a bearer token."""


class OpenAICompatClient:
    """Chat completions through the official ``openai`` package, with our own retries."""

    def __init__(
        self,
        endpoint: ModelEndpoint,
        *,
        rng: random.Random | None = None,
        sleep: Callable[[float], Any] = asyncio.sleep,
    ) -> None:
        self.endpoint = endpoint
        self._rng = rng or random.Random()
        self._sleep = sleep
        self._sdk: openai.AsyncOpenAI | None = None
        self._completions_url = f"{endpoint.base_url.rstrip('/')}/chat/completions"
        self._sdk_loop: asyncio.AbstractEventLoop | None = None

    async def complete(self, messages: Sequence[ChatMessage], params: SamplingParams) -> ModelReply:
        """Return the reply, or raise :class:`ModelError` once retries are spent."""
        request = self._request(messages, params)
        started = time.perf_counter()
        attempts = 0
        retried: list[str] = []  # recorded with the reply: a retry must not stay hidden
        while True:
            attempts += 1
            try:
                reply = await self._attempt(request)
            except ModelError as exc:
                raise ModelError(exc.kind, exc.message, attempts) from exc
            except Exception as exc:  # the port promises ModelError for every failed call
                failure = classify(exc)
                if not failure.retryable or attempts > self.endpoint.max_retries:
                    raise ModelError(failure.kind, failure.message, attempts) from exc
                retried.append(failure.kind)
                await self._sleep(self._backoff(attempts, failure))
                continue
            latency_ms = (time.perf_counter() - started) * 1000.0
            return msgspec.structs.replace(reply, latency_ms=latency_ms, attempts=attempts, retried=retried)

    async def close(self) -> None:
        """Close the HTTP connections."""
        sdk, loop = self._sdk, self._sdk_loop
        self._sdk = self._sdk_loop = None
        # A pool made on another (finished) loop has nothing left that can be closed.
        if sdk is not None and loop is asyncio.get_running_loop():
            await sdk.close()

    def _sdk_client(self) -> openai.AsyncOpenAI:
        """The SDK client of the running loop; its connection pool cannot outlive a loop."""
        loop = asyncio.get_running_loop()
        if self._sdk is None or self._sdk_loop is not loop:
            self._sdk_loop = loop
            self._sdk = openai.AsyncOpenAI(
                base_url=self.endpoint.base_url,
                api_key=self.endpoint.api_key,
                timeout=self.endpoint.timeout,
                max_retries=0,
                http_client=openai.DefaultAioHttpClient(timeout=self.endpoint.timeout),
            )
        return self._sdk

    async def _attempt(self, request: dict[str, Any]) -> ModelReply:
        endpoint = self.endpoint
        async with endpoint_semaphore(endpoint.base_url, endpoint.max_concurrency):
            # The SDK's timeout is per network operation; this one bounds the whole attempt.
            async with asyncio.timeout(endpoint.timeout):
                response = await self._sdk_client().post(
                    self._completions_url, body=request, cast_to=httpx2.Response, options=_AUTHENTICATED
                )
                body = response.content
        return decode_completion(body, endpoint.model)

    def _request(self, messages: Sequence[ChatMessage], params: SamplingParams) -> dict[str, Any]:
        endpoint = self.endpoint
        extra_body = dict(endpoint.extra_body)
        if params.top_k > 0:  # vLLM reads -1 as "off" and rejects 0: send only real limits
            extra_body["top_k"] = params.top_k
        if endpoint.return_token_ids:
            extra_body["return_token_ids"] = True
        request: dict[str, Any] = {
            "model": endpoint.model,
            "messages": [{"role": m.role, "content": m.content} for m in messages],
            "temperature": params.temperature,
            "top_p": params.top_p,
            "max_tokens": params.max_tokens,
            "n": 1,
        }
        if params.seed is not None:
            request["seed"] = params.seed
        if endpoint.return_logprobs:
            request["logprobs"] = True
        request.update(extra_body)  # server extensions travel as top-level fields
        return request

    def _backoff(self, attempts: int, failure: Failure) -> float:
        """Full jitter: uniform in [0, min(max, base * 2**(attempt-1))]; honour Retry-After."""
        ceiling = min(self.endpoint.backoff_max, self.endpoint.backoff_base * 2 ** (attempts - 1))
        delay = self._rng.uniform(0.0, ceiling)
        if failure.retry_after is not None:
            delay = max(delay, min(failure.retry_after, self.endpoint.backoff_max))
        return delay
