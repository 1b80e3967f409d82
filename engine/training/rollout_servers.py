"""Who serves the demo's rollouts: llama.cpp's own server, or the endpoint inside the trainer.

Either way the workers call an OpenAI-compatible URL, and a new version reaches it through
apollo's weight sync (``policy.updated`` -> :class:`~engine.serving.PolicySync` and a
loader -> ``policy.activated``); only the server and its loader differ:

* ``llamacpp``: llama.cpp's server (``xllamacpp``) over the set-up's GGUF of the base model;
  the loader converts the checkpoint's adapters to a GGUF LoRA adapter and restarts the
  server with it (:mod:`engine.training.llamacpp_policy`);
* ``trainer``: :class:`~engine.training.server.GenerationServer` over a copy of the trained
  model; the loader copies the checkpoint's adapters into that copy.
"""

from __future__ import annotations

import contextlib
import copy
import importlib.util
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.serving import CallableLoader, LoadFailed, WeightLoader
from engine.training import checkpoint
from engine.training.generator import Generator
from engine.training.llamacpp_policy import AdapterShape, LlamaCppLoraLoader, LlamaCppPolicyServer, adapter_for
from engine.training.model_package import MODEL_NAME, ModelPackageMissing, gguf_path
from engine.training.server import GenerationServer
from engine.training.torch_thread import run_torch

SERVERS = ("llamacpp", "trainer")
PROMPT_ROOM = 512
"""Context per llama.cpp slot beyond the reply: the demo's prompts are about 80 tokens."""
MAX_SLOTS = 4
"""Requests llama.cpp generates at once; more wait for a slot. On this 2-core machine 16
slots took 2-4x longer than 4 for a step's 16 rollouts: each slot prefills its own copy of
the prompt after every restart, and a queued request reuses a finished one's prefix."""


@dataclass(frozen=True)
class Served:
    """A running rollout server: where the workers call it and how new weights reach it."""

    base_url: str
    port: int
    loader: WeightLoader


@dataclass(frozen=True)
class ServingPlan:
    """What the server starts with."""

    kind: str
    """One of :data:`SERVERS`."""
    port: int
    """0: any free port."""
    requests: int
    """Rollouts generated at once (a step's groups x group size)."""
    max_tokens: int
    lora_alpha: float
    served_folder: Path | None
    """The checkpoint folder of the version to serve first (``None``: the base model)."""
    version: int


def require_server(kind: str) -> None:
    """Refuse early, naming the package, when the chosen server is not installed."""
    if kind == "llamacpp" and importlib.util.find_spec("xllamacpp") is None:
        msg = ("--server llamacpp needs llama.cpp's server: `pip install -e '.[llamacpp]'` (./setup.sh does it), "
               "or use --server trainer")
        raise ModelPackageMissing(msg)


@contextlib.asynccontextmanager
async def serving(plan: ServingPlan, model: Any, tokenizer: Any) -> AsyncIterator[Served]:
    """Start the planned server (``model`` is the trainer's, already holding ``plan.version``)."""
    if plan.kind == "llamacpp":
        async with _llamacpp(plan, AdapterShape.of(model, plan.lora_alpha)) as served:
            yield served
    elif plan.kind == "trainer":
        async with _trainer(plan, model, tokenizer) as served:
            yield served
    else:
        msg = f"unknown rollout server {plan.kind!r} (one of {', '.join(SERVERS)})"
        raise ValueError(msg)


@contextlib.asynccontextmanager
async def _llamacpp(plan: ServingPlan, shape: AdapterShape) -> AsyncIterator[Served]:
    lora = None
    if plan.served_folder is not None:  # a resumed demo serves its last version from the start
        lora = await run_torch(adapter_for, plan.served_folder, shape)
    server = LlamaCppPolicyServer(gguf_path(), MODEL_NAME, port=plan.port, ctx_per_slot=PROMPT_ROOM + plan.max_tokens,
                                  parallel=max(1, min(plan.requests, MAX_SLOTS)))
    await server.start(lora)
    try:
        yield Served(server.base_url, server.port, LlamaCppLoraLoader(server, shape))
    finally:
        await server.close()


@contextlib.asynccontextmanager
async def _trainer(plan: ServingPlan, model: Any, tokenizer: Any) -> AsyncIterator[Served]:
    generator = Generator(copy.deepcopy(model), tokenizer, version=plan.version)
    async with GenerationServer(generator, MODEL_NAME, port=plan.port) as server:
        yield Served(server.base_url, server.port, CallableLoader(_copy_into(server)))


def _copy_into(server: GenerationServer) -> Any:
    async def swap(update: Any) -> str | None:
        folder = Path(update.checkpoint)
        try:
            state = await run_torch(checkpoint.load_weights, folder)
        except (OSError, RuntimeError) as exc:
            msg = f"cannot read the weights in {folder}: {exc}"
            raise LoadFailed(msg) from exc
        await server.load_weights(state, int(update.version))
        return None

    return swap
