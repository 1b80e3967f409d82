"""An OpenAI-compatible fake server on loopback, for tests and benchmarks.

It answers ``POST /v1/chat/completions`` from a policy (a ``messages -> str`` callable or
a scripted model file), can inject failures one request at a time, and counts requests
so a test can assert, say, that a replay made zero calls. In-process::

    async with FakeOpenAIServer(lambda messages: "<answer>\\boxed{4}</answer>") as server:
        server.plan("http_500", "hang")         # the next two requests fail
        ...  # point a client at server.base_url
        assert server.requests_total == 3

As a process (prints its base URL on the first line, then serves until SIGTERM)::

    python -m engine.models.fake_server --port 0 --script examples/scripted/demo.json

Other processes read the counters at ``GET /fake/stats`` and plan failures with
``POST /fake/plan`` (``{"plan": ["http_500", {"content": "hi"}]}``).

vLLM's runtime LoRA endpoints (``POST /v1/load_lora_adapter``, ``/v1/unload_lora_adapter``)
are answered too and recorded in ``server.lora`` (:mod:`engine.models.fake_lora`).

Fake tokens are the UTF-8 bytes of the text, which keeps token ids, usage and
``max_tokens`` truncation deterministic without a tokenizer.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import contextlib
import random
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

import msgspec
from aiohttp import web

from engine.console.argtypes import number, whole_number
from engine.models.fake_lora import FakeLoraAdapters
from engine.models.fake_replies import (
    CONTEXT_WORDINGS,
    FAULT_RESPONSES,
    CannedReply,
    completion_body,
    content_of,
    context_length_error,
    error_response,
    json_response,
    prompt_text,
)
from engine.models.scripted import ScriptedModelClient, ScriptError
from events.model import ChatMessage
from handlers.ports import ModelError

Fault = Literal[
    "http_500", "http_503", "http_429", "hang", "context_length", "bad_request",
    "garbage_json", "empty_choices", "null_content", "drop_connection",
]  # fmt: skip
FAULTS: frozenset[str] = frozenset(get_args(Fault))
Policy = Callable[[list[dict[str, Any]]], str]
_THINK = re.compile(r"^\s*<think>(.*?)</think>\s*", re.DOTALL)


Planned = Fault | CannedReply


class ReplyDelay:
    """How long each reply waits: a latency, +/- up to a jitter drawn uniformly.

    The draws are seeded, so every benchmark run sees the same sequence of waits. A jitter
    above the latency is capped at it (no negative waits); a negative one is refused.
    """

    def __init__(self, latency_ms: float, jitter_ms: float = 0.0) -> None:
        if jitter_ms < 0:
            raise ValueError(f"jitter must be 0 ms or more, not {jitter_ms:g}")
        self.latency_ms = latency_ms
        self.jitter_ms = min(jitter_ms, max(0.0, latency_ms))
        self._rng = random.Random(0)

    def next_s(self) -> float:
        return (self.latency_ms + self._rng.uniform(-self.jitter_ms, self.jitter_ms)) / 1000.0


class FakeOpenAIServer:
    """A loopback chat-completions server with scripted replies and injected failures."""

    def __init__(
        self,
        policy: Policy | ScriptedModelClient | str | Path | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_ms: float = 0.0,
        jitter_ms: float = 0.0,
        split_reasoning: bool = False,
        max_context: int | None = None,
        context_wording: str = "vllm",
        hang_s: float = 3600.0,
        models: Sequence[str] = ("fake-model",),
        refuse_unlisted: bool = False,
        answer_as_listed: bool = False,
        listing: bool = True,
        backlog: int = 1024,
    ) -> None:
        self.policy = _as_policy(policy)
        self.host, self.port, self.backlog = host, port, backlog
        self.latency_ms = latency_ms
        self._delay = ReplyDelay(latency_ms, jitter_ms)
        self.split_reasoning = split_reasoning
        """Move a leading ``<think>`` block into ``reasoning_content``, as vLLM's parser does."""
        self.max_context = max_context
        """Reject prompts whose fake tokens plus ``max_tokens`` exceed this, like vLLM."""
        if context_wording not in CONTEXT_WORDINGS:
            raise ValueError(f"unknown context wording {context_wording!r}; known: {list(CONTEXT_WORDINGS)}")
        self.context_wording = context_wording
        """Whose error the rejection copies: ``vllm``, ``sglang``, ``llamacpp`` or ``openai``."""
        self.hang_s = hang_s
        self.models = list(models)
        self.refuse_unlisted = refuse_unlisted
        self.answer_as_listed = answer_as_listed
        """Serve a name ``/v1/models`` does not list with the first listed model, and name that one
        in the reply, as llama.cpp does with its one model."""
        self.listing = listing
        """Serve ``GET /v1/models`` (a server without it answers 404 there)."""
        """Answer a chat request for a name ``/v1/models`` does not list with vLLM's 404 (else serve
        any name, as llama.cpp does); such refusals count in ``refused_names``, not ``requests_total``."""
        self._plan: collections.deque[Planned] = collections.deque()
        self.lora = FakeLoraAdapters()
        """vLLM's runtime LoRA load/unload endpoints: what is loaded, every call made."""
        self._closing = asyncio.Event()
        self._runner: web.AppRunner | None = None
        self.reset_stats()

    def next_wait_s(self) -> float:
        """Seconds the next reply waits: ``latency_ms`` +/- up to ``jitter_ms``, uniform."""
        return self._delay.next_s()

    # -- lifecycle -------------------------------------------------------------------

    @property
    def base_url(self) -> str:
        """The ``/v1`` base URL clients should use."""
        return f"http://{self.host}:{self.port}/v1"

    async def start(self) -> str:
        """Start listening; return :attr:`base_url` (with the real port if 0 was asked)."""
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat_completions)
        if self.listing:
            app.router.add_get("/v1/models", self._list_models)
        self.lora.add_routes(app)
        app.router.add_get("/fake/stats", self._get_stats)
        app.router.add_post("/fake/plan", self._post_plan)
        app.router.add_post("/fake/reset", self._post_reset)
        # aiohttp sets TCP_NODELAY on accepted sockets; cancel handlers of gone clients.
        self._runner = web.AppRunner(app, access_log=None, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, backlog=self.backlog)
        await site.start()
        server = site._server  # aiohttp exposes the bound port nowhere else
        if self.port == 0 and server is not None:
            self.port = server.sockets[0].getsockname()[1]
        return self.base_url

    async def stop(self) -> None:
        """Release hanging requests and stop serving."""
        self._closing.set()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeOpenAIServer:
        await self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.stop()

    # -- test controls ---------------------------------------------------------------

    def plan(self, *items: Planned | str) -> None:
        """Queue faults or canned replies; each is used by one upcoming request, in order."""
        for item in items:
            if isinstance(item, str) and item not in FAULTS:
                msg = f"unknown fault {item!r}; known: {sorted(FAULTS)}"
                raise ValueError(msg)
            self._plan.append(item)  # type: ignore[arg-type]

    def reset_stats(self) -> None:
        """Zero the counters and forget recorded request bodies."""
        self.requests_total = 0
        self.refused_names = 0
        self.requests_by_model: collections.Counter[str] = collections.Counter()
        self.in_flight = 0
        self.max_in_flight = 0
        self.bodies: collections.deque[dict[str, Any]] = collections.deque(maxlen=1000)
        """The last 1000 request bodies, newest last."""
        self.authorizations: collections.deque[str | None] = collections.deque(maxlen=1000)
        """The ``Authorization`` header of the last 1000 requests (None where absent)."""

    def stats(self) -> dict[str, Any]:
        """The counters as plain data."""
        return {
            "requests_total": self.requests_total,
            "requests_by_model": dict(self.requests_by_model),
            "in_flight": self.in_flight,
            "max_in_flight": self.max_in_flight,
            "planned": len(self._plan),
        }

    # -- handlers --------------------------------------------------------------------

    async def _chat_completions(self, request: web.Request) -> web.StreamResponse:
        if self.refuse_unlisted:
            refusal = await self._refusal(request)
            if refusal is not None:
                return refusal
        self.requests_total += 1
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            return await self._answer(request)
        finally:
            self.in_flight -= 1

    async def _refusal(self, request: web.Request) -> web.Response | None:
        """vLLM's 404 for a model name it does not serve, or None to serve the request."""
        try:
            body = msgspec.json.decode(await request.read())
        except msgspec.DecodeError:
            return None
        model = body.get("model") if isinstance(body, dict) else None
        if not isinstance(model, str) or model in self.models or model in self.lora.loaded:
            return None
        self.refused_names += 1
        return error_response(404, f"The model `{model}` does not exist.")

    async def _answer(self, request: web.Request) -> web.StreamResponse:
        self.authorizations.append(request.headers.get("Authorization"))
        try:
            body = msgspec.json.decode(await request.read())
        except msgspec.DecodeError:
            return error_response(400, "the request body is not JSON")
        if not isinstance(body, dict):
            return error_response(400, "the request body must be a JSON object")
        model = str(body.get("model", ""))
        self.requests_by_model[model] += 1
        self.bodies.append(body)
        if self.answer_as_listed and model not in self.models:
            model = self.models[0]
        if self.latency_ms > 0:
            await asyncio.sleep(self.next_wait_s())
        planned = self._plan.popleft() if self._plan else None
        if isinstance(planned, str):
            return await self._fault(planned, request)
        messages = body.get("messages")
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            return error_response(400, "'messages' must be a list of objects")
        if isinstance(planned, CannedReply):
            return json_response(completion_body(model, planned, body, prompt=messages))
        return self._from_policy(model, messages, body)

    def _from_policy(
        self, model: str, messages: list[dict[str, Any]], body: dict[str, Any]
    ) -> web.Response:
        prompt_tokens = len(prompt_text(messages).encode())
        max_tokens = body.get("max_tokens", body.get("max_completion_tokens"))
        max_tokens = 1 << 30 if max_tokens is None else max_tokens
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            return error_response(400, f"max_tokens must be at least 1, got {max_tokens!r}")
        if self.max_context is not None and prompt_tokens + max_tokens > self.max_context:
            return context_length_error(self.max_context, prompt_tokens, max_tokens, self.context_wording)
        try:
            text = self.policy(messages)
        except ModelError as exc:
            return error_response(400, exc.message)
        return json_response(
            completion_body(model, self._reply(text, max_tokens), body, prompt=messages)
        )

    def _reply(self, text: str, max_tokens: int) -> CannedReply:
        finish_reason = "stop"
        if len(text.encode()) > max_tokens:
            text = text.encode()[:max_tokens].decode(errors="ignore")
            finish_reason = "length"
        reasoning = None
        found = _THINK.match(text) if self.split_reasoning else None
        if found is not None:
            reasoning, text = found.group(1).strip(), text[found.end() :]
        return CannedReply(content=text, reasoning_content=reasoning, finish_reason=finish_reason)

    async def _fault(self, fault: str, request: web.Request) -> web.StreamResponse:
        if fault == "hang":
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._closing.wait(), self.hang_s)
            return error_response(504, "the fake server hung on purpose")
        if fault == "drop_connection":
            if request.transport is not None:
                request.transport.abort()
            return web.Response(status=500)
        return FAULT_RESPONSES[fault]()

    async def _list_models(self, request: web.Request) -> web.Response:
        del request
        names = [*self.models, *self.lora.loaded]
        data = [{"id": m, "object": "model", "owned_by": "fake"} for m in names]
        if self.max_context is not None:  # vLLM lists its context with each model
            data = [entry | {"max_model_len": self.max_context} for entry in data]
        return json_response({"object": "list", "data": data})

    async def _get_stats(self, request: web.Request) -> web.Response:
        del request
        return json_response(self.stats())

    async def _post_plan(self, request: web.Request) -> web.Response:
        try:
            items = msgspec.json.decode(await request.read(), type=dict[str, list[Any]])["plan"]
            self.plan(
                *[i if isinstance(i, str) else msgspec.convert(i, CannedReply) for i in items]
            )
        except (msgspec.DecodeError, msgspec.ValidationError, KeyError, ValueError) as exc:
            return error_response(400, f"bad plan: {exc}")
        return json_response(self.stats())

    async def _post_reset(self, request: web.Request) -> web.Response:
        del request
        self._plan.clear()
        self.reset_stats()
        return json_response(self.stats())


def _as_policy(policy: Policy | ScriptedModelClient | str | Path | None) -> Policy:
    if policy is None:
        return lambda messages: "ok"
    if isinstance(policy, str | Path):
        policy = ScriptedModelClient.from_file(policy)
    if isinstance(policy, ScriptedModelClient):
        scripted = policy
        return lambda messages: scripted.reply_for(_chat_messages(messages))
    return policy


def _chat_messages(messages: list[dict[str, Any]]) -> list[ChatMessage]:
    return [ChatMessage(role=str(m.get("role", "")), content=content_of(m)) for m in messages]


# -- command line ------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    """Serve until SIGINT/SIGTERM; the first stdout line is the base URL."""
    parser = argparse.ArgumentParser(prog="python -m engine.models.fake_server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=whole_number(0, 65535), default=0, help="0 picks a free port")
    parser.add_argument("--script", help="scripted model file (JSON/YAML) for the replies")
    parser.add_argument("--latency-ms", type=number(0), default=0.0)
    parser.add_argument(
        "--jitter-ms", type=number(0), default=0.0, help="each reply waits latency +/- up to this (uniform)"
    )
    parser.add_argument("--split-reasoning", action="store_true")
    parser.add_argument(
        "--max-context", type=whole_number(1), help="tokens (prompt + max_tokens) a request may ask for"
    )
    parser.add_argument(
        "--fail", action="append", default=[], choices=sorted(FAULTS),
        help="plan a fault for the next request (repeatable, in order)",
    )  # fmt: skip
    parser.add_argument(
        "--context-wording", choices=CONTEXT_WORDINGS, default="vllm",
        help="whose error a request beyond --max-context gets",
    )  # fmt: skip
    parser.add_argument("--model", action="append", help="model names listed by /v1/models")
    parser.add_argument("--refuse-unlisted", action="store_true",
                        help="answer a name /v1/models does not list with 404, as vLLM does")
    parser.add_argument("--answer-as-listed", action="store_true",
                        help="serve a name /v1/models does not list with the first listed model, as llama.cpp does")
    args = parser.parse_args(argv)
    try:
        server = FakeOpenAIServer(
            args.script, host=args.host, port=args.port, latency_ms=args.latency_ms,
            jitter_ms=args.jitter_ms, split_reasoning=args.split_reasoning, max_context=args.max_context,
            context_wording=args.context_wording, models=args.model or ("fake-model",),
            refuse_unlisted=args.refuse_unlisted, answer_as_listed=args.answer_as_listed,
        )  # fmt: skip
    except ScriptError as exc:
        print(f"fake_server: {exc}", file=sys.stderr)
        return 2
    server.plan(*args.fail)
    asyncio.run(_serve(server))
    return 0


async def _serve(server: FakeOpenAIServer) -> None:
    import signal

    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stop.set)
    print(await server.start(), flush=True)
    try:
        await stop.wait()
    finally:
        await server.stop()


if __name__ == "__main__":
    raise SystemExit(main())
