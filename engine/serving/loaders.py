"""Ways to make a serving endpoint serve new weights: the ``WeightLoader`` port.

* :class:`VllmLoraLoader`: vLLM's runtime LoRA endpoints (``deploy/vllm/README.md``).
  Each version is loaded under its own name, ``<adapter>-v<version>``, so requests
  already sent to the previous one finish on the weights they started with; the previous
  one is unloaded once the new one is served.
* :class:`HttpReloadHook`: full weights, through a POST to a URL of the deployment's
  (a sidecar that restarts vLLM on the checkpoint, say).
* :class:`CommandReloadHook`: full weights, through a command run with the update in its
  environment.
* :class:`CallableLoader`: a function in this process (a trainer's own generation server).

A loader raises :class:`LoadFailed` with one line when the endpoint did not take the
weights; whatever it served before keeps serving.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import aiohttp

from engine.errors import EngineError
from events.policy import PolicyActivated, PolicyUpdated


class LoadFailed(EngineError):
    """The endpoint did not take the weights; ``reason`` says why in one line."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class WeightLoader(Protocol):
    method: str
    """Recorded in ``policy.activated``: ``lora``, ``http_hook``, ``command_hook``, ``in_process``."""

    async def load(self, update: PolicyUpdated, previous: PolicyActivated | None) -> str | None:
        """Serve ``update``'s weights; return the model name calls must now send (``None``:
        the configured one). Loading an update that is already served must succeed."""
        ...


class VllmLoraLoader:
    """``POST /v1/load_lora_adapter`` then ``POST /v1/unload_lora_adapter`` of the previous."""

    method = "lora"

    def __init__(self, base_url: str, *, api_key: str | None = None, timeout: float = 300.0) -> None:
        self.base_url = base_url.rstrip("/")
        """The server's OpenAI base URL, ``http://host:8000/v1``."""
        self.api_key = api_key
        self.timeout = timeout

    @staticmethod
    def served_name(update: PolicyUpdated) -> str:
        return f"{update.adapter}-v{update.version}"

    async def load(self, update: PolicyUpdated, previous: PolicyActivated | None) -> str | None:
        if not update.adapter:
            raise LoadFailed("a LoRA update needs an adapter name (policy.updated's adapter)")
        name = self.served_name(update)
        status, text = await _post(self.base_url + "/load_lora_adapter",
                                   {"lora_name": name, "lora_path": update.checkpoint},
                                   api_key=self.api_key, timeout=self.timeout)
        # A crash after vLLM loaded it and before the activation was recorded: already there.
        if status != 200 and not (status == 400 and "already been loaded" in text):
            raise LoadFailed(f"vLLM refused to load adapter {name!r} (HTTP {status}): {_one_line(text)}")
        if previous is not None and previous.served_model and previous.served_model != name:
            # Best effort: a leftover adapter costs memory, never correctness.
            await _post(self.base_url + "/unload_lora_adapter", {"lora_name": previous.served_model},
                        api_key=self.api_key, timeout=self.timeout, quiet=True)
        return name


class HttpReloadHook:
    """POSTs the update as JSON to ``url``; a 2xx answer means the new weights are served.

    The body: ``{"policy", "version", "checkpoint", "base_model", "adapter"}``. An answer
    that is a JSON object with ``served_model`` names the model calls must now send.
    """

    method = "http_hook"

    def __init__(self, url: str, *, headers: dict[str, str] | None = None, timeout: float = 600.0) -> None:
        self.url = url
        self.headers = dict(headers or {})
        self.timeout = timeout

    async def load(self, update: PolicyUpdated, previous: PolicyActivated | None) -> str | None:
        del previous
        body = {"policy": update.policy, "version": update.version, "checkpoint": update.checkpoint,
                "base_model": update.base_model, "adapter": update.adapter}
        status, text = await _post(self.url, body, headers=self.headers, timeout=self.timeout)
        if not 200 <= status < 300:
            raise LoadFailed(f"the reload hook {self.url} answered HTTP {status}: {_one_line(text)}")
        return _served_model(text)


class CommandReloadHook:
    """Runs ``argv`` with the update in ``APOLLO_POLICY_*`` variables; exit 0 means served.

    Variables: ``APOLLO_POLICY_NAME``, ``_VERSION``, ``_CHECKPOINT``, ``_BASE_MODEL``,
    ``_ADAPTER`` (empty for full weights).
    """

    method = "command_hook"

    def __init__(self, argv: Sequence[str], *, timeout: float = 600.0) -> None:
        if not argv:
            raise ValueError("the reload command is empty")
        self.argv = list(argv)
        self.timeout = timeout

    async def load(self, update: PolicyUpdated, previous: PolicyActivated | None) -> str | None:
        del previous
        env = {**os.environ, "APOLLO_POLICY_NAME": update.policy, "APOLLO_POLICY_VERSION": str(update.version),
               "APOLLO_POLICY_CHECKPOINT": update.checkpoint, "APOLLO_POLICY_BASE_MODEL": update.base_model,
               "APOLLO_POLICY_ADAPTER": update.adapter or ""}
        try:
            proc = await asyncio.create_subprocess_exec(
                *self.argv, env=env, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
            )
        except OSError as exc:
            raise LoadFailed(f"cannot run the reload command {self.argv[0]!r}: {exc.strerror or exc}") from exc
        try:
            _, err = await asyncio.wait_for(proc.communicate(), self.timeout)
        except TimeoutError as exc:
            proc.kill()
            await proc.wait()
            raise LoadFailed(f"the reload command ran past {self.timeout:g}s and was killed") from exc
        if proc.returncode != 0:
            last = _one_line(err.decode(errors="replace").strip().splitlines()[-1] if err.strip() else "")
            raise LoadFailed(f"the reload command exited with {proc.returncode}: {last or 'no message'}")
        return None


class CallableLoader:
    """A function of this process: ``fn(update)`` (plain or async) swaps the weights.

    It returns the model name calls must now send, or ``None``; it raises
    :class:`LoadFailed` (or any exception, recorded by its type and message) to refuse.
    """

    method = "in_process"

    def __init__(self, fn: Callable[[PolicyUpdated], str | Awaitable[str | None] | None]) -> None:
        self.fn = fn

    async def load(self, update: PolicyUpdated, previous: PolicyActivated | None) -> str | None:
        del previous
        try:
            result = self.fn(update)
            if inspect.isawaitable(result):
                result = await result
        except LoadFailed:
            raise
        except Exception as exc:  # the server's own failure, recorded as the reason
            raise LoadFailed(f"{type(exc).__name__}: {_one_line(str(exc))}") from exc
        return result if isinstance(result, str) and result else None


async def _post(
    url: str, body: dict[str, Any], *, api_key: str | None = None, headers: dict[str, str] | None = None,
    timeout: float, quiet: bool = False,
) -> tuple[int, str]:
    sent = dict(headers or {})
    if api_key:
        sent["Authorization"] = f"Bearer {api_key}"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=timeout)) as session,
            session.post(url, json=body, headers=sent) as response,
        ):
            return response.status, await response.text()
    except (aiohttp.ClientError, TimeoutError, OSError) as exc:
        if quiet:
            return 0, str(exc)
        raise LoadFailed(f"cannot reach {url}: {_one_line(str(exc)) or type(exc).__name__}") from exc


def _served_model(text: str) -> str | None:
    try:
        data = json.loads(text)
    except ValueError:
        return None
    served = data.get("served_model") if isinstance(data, dict) else None
    return served if isinstance(served, str) and served else None


def _one_line(text: str, limit: int = 300) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 3] + "..."
