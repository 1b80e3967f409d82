"""An OpenAI-compatible endpoint on loopback that serves the trainer's current weights.

``GET /v1/models`` and ``POST /v1/chat/completions`` (non-streaming, ``n`` = 1). Like vLLM,
``return_token_ids: true`` adds ``prompt_token_ids`` and the choice's ``token_ids``, and
``logprobs: true`` adds per-token logprobs (tokens spelled ``token_id:N``); each reply also
says which weights wrote it (``policy_version``). Requests arriving within ``batch_window``
seconds of each other are generated as one batch, off the event loop.

Why not a third-party server: llama.cpp's server would need the weights re-exported to GGUF
after every optimiser step, and ``transformers serve`` cannot load this GGUF (see
docs/training.md); serving the trainer's own model object keeps every rollout on-policy.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import Mapping
from typing import Any

from aiohttp import web

from engine.errors import EngineError
from engine.training.generator import Completion, GenerationRequest, Generator
from engine.training.torch_thread import run_torch

MAX_TOKENS_LIMIT = 4096


class BadRequest(ValueError, EngineError):
    """A request body this server refuses (answered 400 with the reason)."""


class GenerationServer:
    """The endpoint; ``start()`` binds a free loopback port, ``base_url`` is what clients use."""

    def __init__(self, generator: Generator, model_name: str, *, port: int = 0, batch_window: float = 0.05,
                 max_batch: int = 32) -> None:
        self.generator = generator
        self.model_name = model_name
        self.batch_window = batch_window
        self.max_batch = max_batch
        self.generated_batches = 0
        self._queue: asyncio.Queue[tuple[GenerationRequest, asyncio.Future[Completion]]] = asyncio.Queue()
        self._runner: web.AppRunner | None = None
        self._worker: asyncio.Task[None] | None = None
        self.port = port
        """0 until started: a free port is picked."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def version(self) -> int:
        return self.generator.version

    async def start(self) -> GenerationServer:
        app = web.Application(client_max_size=8 * 2**20)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", self.port)
        await site.start()
        self.port = int(site._server.sockets[0].getsockname()[1])  # aiohttp has no public getter
        self._worker = asyncio.create_task(self._batches())
        return self

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._worker
        if self._runner is not None:
            await self._runner.cleanup()

    async def load_weights(self, state: Mapping[str, Any], version: int) -> None:
        """Serve ``state`` as ``version``: requests already generating finish on the old weights."""
        await run_torch(self.generator.load_state, state, version)

    async def __aenter__(self) -> GenerationServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- HTTP ------------------------------------------------------------------------

    async def _models(self, _request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [
            {"id": self.model_name, "object": "model", "owned_by": "apollo", "policy_version": self.version},
        ]})

    async def _chat(self, request: web.Request) -> web.Response:
        try:
            body = await request.json()
        except ValueError as exc:
            return _error(400, f"the body is not JSON: {exc}")
        try:
            gen, options = parse_chat_request(body, self.model_name)
        except BadRequest as exc:
            return _error(400, str(exc))
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        await self._queue.put((gen, future))
        try:
            completion = await future
        except Exception as exc:  # noqa: BLE001 - a generation failure is the server's, not the caller's
            return _error(500, f"generation failed: {type(exc).__name__}: {exc}")
        return web.json_response(self._reply(completion, options))

    def _reply(self, c: Completion, options: Mapping[str, bool]) -> dict[str, Any]:
        choice: dict[str, Any] = {"index": 0, "message": {"role": "assistant", "content": c.text},
                                  "finish_reason": c.finish_reason}
        reply: dict[str, Any] = {
            "id": f"chatcmpl-{uuid.uuid4().hex}", "object": "chat.completion", "created": int(time.time()),
            "model": self.model_name, "choices": [choice], "policy_version": c.version,
            "usage": {"prompt_tokens": len(c.prompt_token_ids), "completion_tokens": len(c.token_ids),
                      "total_tokens": len(c.prompt_token_ids) + len(c.token_ids)},
        }
        if options["token_ids"]:
            choice["token_ids"] = c.token_ids
            reply["prompt_token_ids"] = c.prompt_token_ids
        if options["logprobs"]:
            choice["logprobs"] = {"content": [
                {"token": f"token_id:{t}", "logprob": lp} for t, lp in zip(c.token_ids, c.logprobs, strict=True)
            ]}
        return reply

    # -- batching --------------------------------------------------------------------

    async def _batches(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            batch = [await self._queue.get()]
            deadline = loop.time() + self.batch_window
            while len(batch) < self.max_batch:
                try:
                    batch.append(await asyncio.wait_for(self._queue.get(), max(0.0, deadline - loop.time())))
                except TimeoutError:
                    break
            live = [(r, f) for r, f in batch if not f.cancelled()]
            if not live:
                continue
            try:
                completions = await run_torch(self.generator.generate, [r for r, _ in live])
            except Exception as exc:  # noqa: BLE001 - every waiting request gets the failure
                for _, future in live:
                    if not future.done():
                        future.set_exception(exc)
                continue
            self.generated_batches += 1
            for (_, future), completion in zip(live, completions, strict=True):
                if not future.done():
                    future.set_result(completion)


def parse_chat_request(body: Any, model_name: str) -> tuple[GenerationRequest, dict[str, bool]]:
    """The generation a chat completion body asks for; :class:`BadRequest` names what is wrong."""
    if not isinstance(body, dict):
        raise BadRequest("the body must be a JSON object")
    model = body.get("model", model_name)
    if model != model_name:
        raise BadRequest(f"unknown model {model!r}: this server serves {model_name!r}")
    messages = body.get("messages")
    if not isinstance(messages, list) or not messages:
        raise BadRequest("'messages' must be a non-empty list")
    for i, m in enumerate(messages):
        if not (isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)):
            raise BadRequest(f"messages[{i}] must be an object with string 'role' and 'content'")
    if body.get("stream"):
        raise BadRequest("streaming is not supported")
    if body.get("n", 1) != 1:
        raise BadRequest("only n=1 is supported")
    max_tokens = _number(body, "max_tokens", 256, int, low=1, high=MAX_TOKENS_LIMIT)
    request = GenerationRequest(
        messages=[{"role": m["role"], "content": m["content"]} for m in messages],
        max_tokens=int(max_tokens),
        temperature=float(_number(body, "temperature", 1.0, float, low=0.0, high=10.0)),
        top_p=float(_number(body, "top_p", 1.0, float, low=1e-6, high=1.0)),
        top_k=int(_number(body, "top_k", -1, int, low=-1, high=None)),
        seed=None if body.get("seed") is None else int(_number(body, "seed", 0, int, low=None, high=None)),
    )
    options = {"token_ids": bool(body.get("return_token_ids")), "logprobs": bool(body.get("logprobs"))}
    return request, options


def _number(body: dict[str, Any], key: str, default: float, kind: type, *, low: float | None,
            high: float | None) -> float:
    value = body.get(key, default)
    if value is None:
        value = default
    ok = isinstance(value, int | float) and not isinstance(value, bool) and (kind is float or float(value).is_integer())
    if not ok or (low is not None and value < low) or (high is not None and value > high):
        bounds = f"{'' if low is None else f'>= {low}'}{', ' if low is not None and high is not None else ''}" \
                 f"{'' if high is None else f'<= {high}'}"
        raise BadRequest(f"'{key}' must be {'an integer' if kind is int else 'a number'} {bounds}".rstrip())
    return value


def _error(status: int, message: str) -> web.Response:
    kind = "invalid_request_error" if status == 400 else "server_error"
    return web.json_response({"error": {"message": message, "type": kind}}, status=status)
