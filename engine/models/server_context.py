"""How many tokens one request may use, as the model server itself says it.

llama.cpp lists ``meta.n_ctx`` (the context of one slot) with each model in ``/v1/models`` and
``default_generation_settings.n_ctx`` in ``/props``; vLLM and SGLang list ``max_model_len``.
OpenAI says nothing, and None is the answer there.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import openai


def listed_context(entries: Sequence[Mapping[str, Any]], model: str) -> int | None:
    """The context the ``/models`` entry for ``model`` gives (the only entry where the server,
    like llama.cpp, serves one model under any name); None where it says nothing."""
    entry = next((e for e in entries if e.get("id") == model), entries[0] if len(entries) == 1 else None)
    if entry is None:
        return None
    meta = entry.get("meta")
    for value in (entry.get("max_model_len"), meta.get("n_ctx") if isinstance(meta, Mapping) else None):
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return None


async def props_context(client: openai.AsyncOpenAI) -> int | None:
    """llama.cpp's ``/props`` (beside ``/v1``): the context per slot; None where there is no such page."""
    root = str(client.base_url).rstrip("/").removesuffix("/v1")
    try:
        props = await client.get(f"{root}/props", cast_to=object)
    except (openai.OpenAIError, OSError, ValueError):
        return None
    settings = props.get("default_generation_settings") if isinstance(props, dict) else None
    value = settings.get("n_ctx") if isinstance(settings, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def fitted_max_tokens(max_tokens: int, context: int | None) -> int:
    """``max_tokens`` where the server can give that many, else half its context (the other half
    left for the prompt: vLLM refuses a request whose prompt and ``max_tokens`` exceed it)."""
    if context is None or max_tokens <= context:
        return max_tokens
    return max(1, context // 2)


async def server_context(base_url: str, model: str, api_key: str, *, timeout: float = 10.0) -> int | None:
    """The context one request to ``model`` at ``base_url`` may use, where the server says it; None on
    any failure (the endpoint probe is what reports an unusable server)."""
    try:
        client = openai.AsyncOpenAI(base_url=base_url, api_key=api_key or "EMPTY", timeout=timeout, max_retries=0)
    except Exception:  # noqa: BLE001 - a URL the probe will report
        return None
    try:
        try:
            page = await client.models.list()
            context = listed_context([item.model_dump() for item in page.data], model)
        except (openai.OpenAIError, OSError, ValueError):
            context = None
        return context if context is not None else await props_context(client)
    finally:
        await client.close()
