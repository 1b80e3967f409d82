"""vLLM's runtime LoRA endpoints on the fake server, recording every call.

vLLM (started with ``--enable-lora`` and ``VLLM_ALLOW_RUNTIME_LORA_UPDATING=True``) takes
``POST /v1/load_lora_adapter`` with ``{"lora_name": ..., "lora_path": ...}`` and
``POST /v1/unload_lora_adapter`` with ``{"lora_name": ...}``; a loaded adapter is then
served under its name as a model. These handlers answer as vLLM's ``OpenAIServingModels``
does: a name already loaded is a 400, a path that does not exist here a 404 (vLLM's
``LoRAAdapterNotFoundError``), unloading an unknown name a 404.
"""

from __future__ import annotations

import os
from typing import Any

import msgspec
from aiohttp import web

from engine.models.fake_replies import error_response


class FakeLoraAdapters:
    """The adapters a fake server has loaded, and every load/unload request it got."""

    def __init__(self) -> None:
        self.loaded: dict[str, str] = {}
        """Adapter name -> path, in load order."""
        self.calls: list[tuple[str, dict[str, Any]]] = []
        """(``load``/``unload``, request body) of every call, answered or refused."""
        self.refuse_next: str | None = None
        """A message the next load answers with a 400 (a test's way to make vLLM refuse)."""

    def add_routes(self, app: web.Application) -> None:
        app.router.add_post("/v1/load_lora_adapter", self._load)
        app.router.add_post("/v1/unload_lora_adapter", self._unload)

    async def _load(self, request: web.Request) -> web.Response:
        body = await _body(request)
        self.calls.append(("load", body if isinstance(body, dict) else {"raw": body}))
        if not isinstance(body, dict):
            return error_response(400, "the request body must be a JSON object")
        name, path = body.get("lora_name"), body.get("lora_path")
        if not isinstance(name, str) or not name or not isinstance(path, str) or not path:
            return error_response(400, "Both 'lora_name' and 'lora_path' must be provided.")
        if self.refuse_next is not None:
            message, self.refuse_next = self.refuse_next, None
            return error_response(400, message)
        if name in self.loaded:
            return error_response(400, f"The lora adapter '{name}' has already been loaded. If you want to "
                                       "load the adapter in place, set 'load_inplace' to True.")
        if not os.path.exists(path):  # noqa: ASYNC240 - one stat of a local test path
            return error_response(404, f"Loading lora {name} failed: No adapter found for {path}")
        self.loaded[name] = path
        return web.Response(text=f"Success: LoRA adapter '{name}' added successfully.")

    async def _unload(self, request: web.Request) -> web.Response:
        body = await _body(request)
        self.calls.append(("unload", body if isinstance(body, dict) else {"raw": body}))
        name = body.get("lora_name") if isinstance(body, dict) else None
        if not isinstance(name, str) or not name:
            return error_response(400, "'lora_name' needs to be provided to unload a LoRA adapter.")
        if name not in self.loaded:
            return error_response(404, f"The lora adapter '{name}' cannot be found.")
        del self.loaded[name]
        return web.Response(text=f"Success: LoRA adapter '{name}' removed successfully.")


async def _body(request: web.Request) -> Any:
    try:
        return msgspec.json.decode(await request.read())
    except msgspec.DecodeError:
        return None
