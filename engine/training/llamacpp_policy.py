"""The demo's policy served by llama.cpp's own server, each new version as a GGUF LoRA adapter.

llama.cpp loads LoRA adapters when it starts (its ``/lora-adapters`` route only rescales
those), so a new version is served by starting the server again, in this process, on the
same port with ``--lora``: the model file is memory-mapped and loads in about a second,
and the runs' recorded URL stays valid. Requests in flight when it restarts fail and are
retried by apollo's client; the demo restarts only between steps, when none are.

:class:`LlamaCppLoraLoader` is the serving side's :class:`~engine.serving.WeightLoader`: it
writes the checkpoint's adapters next to them as ``adapter.gguf`` (once) and restarts the
server with that file.
"""

from __future__ import annotations

import asyncio
import gc
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.models.llamacpp_server import LlamaServerError, RunningServer, ServeOptions, default_threads, start
from engine.serving import LoadFailed
from engine.training import checkpoint
from engine.training.gguf_lora import AdapterConversionError, write_adapter
from engine.training.torch_thread import run_torch
from events.policy import PolicyActivated, PolicyUpdated

ADAPTER_FILE = "adapter.gguf"


class LlamaCppPolicyServer:
    """llama.cpp serving ``gguf`` (plus at most one LoRA adapter) on one loopback port."""

    def __init__(self, gguf: Path, alias: str, *, port: int = 0, ctx_per_slot: int = 1024, parallel: int = 16,
                 threads: int | None = None, log_level: int | None = 1) -> None:
        self.gguf = gguf
        self.alias = alias
        self.port = port
        """0 until started: a free port is picked, and kept by every restart."""
        self.ctx_per_slot = ctx_per_slot
        self.parallel = parallel
        self.threads = threads or default_threads()
        """llama.cpp's CPU threads: by default every CPU but one, since the trainer and the
        engine share the machine (one stalled thread stalls every token)."""
        self.log_level = log_level
        """llama.cpp's own log (1: errors only; it would log every request and restart)."""
        self.lora: Path | None = None
        """The adapter served now (``None``: the base model)."""
        self.starts = 0
        self._running: RunningServer | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def start(self, lora: Path | None = None) -> LlamaCppPolicyServer:
        """Serve the base model with ``lora`` (or none), stopping the server running before."""
        await asyncio.to_thread(self._restart, lora)
        return self

    async def close(self) -> None:
        await asyncio.to_thread(self._stop)

    def _restart(self, lora: Path | None) -> None:
        self._stop()
        options = ServeOptions(gguf=self.gguf, alias=self.alias, port=self.port, ctx_per_slot=self.ctx_per_slot,
                               parallel=self.parallel, threads=self.threads, lora=(lora,) if lora else (),
                               log_level=self.log_level)
        self._running = start(options)
        self.port = int(self._running.base_url.rsplit(":", 1)[1].split("/", 1)[0])
        self.lora = lora
        self.starts += 1

    def _stop(self) -> None:
        running, self._running = self._running, None
        del running
        gc.collect()  # the xllamacpp server stops (and frees its port) when its object goes

    async def __aenter__(self) -> LlamaCppPolicyServer:
        return await self.start(self.lora)

    async def __aexit__(self, *exc: object) -> None:
        await self.close()


@dataclass(frozen=True)
class AdapterShape:
    """What the conversion needs to know of the adapters and the model they adapt."""

    alpha: float
    """The adapters' ``lora_alpha`` (llama.cpp scales by alpha / rank, as PEFT does)."""
    heads: int
    kv_heads: int

    @classmethod
    def of(cls, model: Any, alpha: float) -> AdapterShape:
        """From the trained model's config (the base GGUF says the same: a test checks)."""
        config = model.config
        heads = int(config.num_attention_heads)
        return cls(alpha=alpha, heads=heads, kv_heads=int(getattr(config, "num_key_value_heads", None) or heads))


def adapter_for(folder: Path, shape: AdapterShape) -> Path:
    """The checkpoint's adapters as a GGUF LoRA adapter in ``folder`` (written once; blocking)."""
    out = folder / ADAPTER_FILE
    if not out.is_file():
        write_adapter(checkpoint.load_weights(folder), out, alpha=shape.alpha, heads=shape.heads,
                      kv_heads=shape.kv_heads)
    return out


class LlamaCppLoraLoader:
    """``policy.updated`` -> the checkpoint converted to ``adapter.gguf`` -> llama.cpp restarted with it."""

    method = "lora"

    def __init__(self, server: LlamaCppPolicyServer, shape: AdapterShape) -> None:
        self.server = server
        self.shape = shape

    async def load(self, update: PolicyUpdated, previous: PolicyActivated | None) -> str | None:
        del previous
        folder = Path(update.checkpoint)
        try:
            adapter = await run_torch(adapter_for, folder, self.shape)
        except (OSError, RuntimeError, AdapterConversionError) as exc:
            msg = f"cannot write the adapter of {folder} for llama.cpp: {exc}"
            raise LoadFailed(msg) from exc
        served = self.server.lora
        try:
            await self.server.start(adapter)
        except LlamaServerError as exc:  # recorded as policy.update_failed
            await self.server.start(served)  # what it served before keeps serving
            msg = f"llama.cpp did not start with {adapter}: {exc}"
            raise LoadFailed(msg) from exc
        return None
