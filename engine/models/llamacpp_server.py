"""llama.cpp's own HTTP server, in this process, through the ``xllamacpp`` wheel (no compiler).

It serves a GGUF file over the OpenAI-compatible API (``/v1/chat/completions``, ``/v1/models``)
plus llama.cpp's ``/props``, ``/health`` and ``/slots``, on the CPU of any machine. The context
is given per slot (what one request may use); llama.cpp's own ``n_ctx`` is the total, shared
out among ``parallel`` slots.
"""

from __future__ import annotations

import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import EngineError

INSTALL_HINT = "install it with `pip install xllamacpp` (./setup.sh does)"


class LlamaServerError(EngineError):
    """The server could not start; the message says why in one line."""


@dataclass(frozen=True)
class ServeOptions:
    """What to serve and how."""

    gguf: Path
    alias: str
    host: str = "127.0.0.1"
    port: int = 8080
    ctx_per_slot: int = 2048
    parallel: int = 4
    lora: tuple[Path, ...] = ()
    threads: int | None = None
    log_level: int | None = None
    """llama.cpp's log verbosity: 1 errors only, 2 warnings too, 3 (its default) every request."""


@dataclass(frozen=True)
class RunningServer:
    """A started server: keep this object alive to keep it serving."""

    base_url: str
    """The OpenAI-compatible base URL (ends in ``/v1``)."""
    options: ServeOptions
    handle: Any


def default_threads() -> int:
    """Every CPU this process may use but one. llama.cpp's threads wait for each other at every layer, so one
    that another process keeps off its core stalls each token: on a 2-core host with one busy process, 2 threads
    generated 0.6-1.4 tokens/s where 1 thread generated 27-81 (SmolLM2-135M; and 81 against 81 when idle)."""
    return max(1, len(os.sched_getaffinity(0)) - 1)


def default_alias(gguf: Path) -> str:
    """``SmolLM2-135M-Instruct.Q4_1.gguf`` -> ``smollm2-135m-instruct``."""
    return gguf.name.split(".")[0].lower()


def start(options: ServeOptions) -> RunningServer:
    """Load the GGUF and listen; raise :class:`LlamaServerError` if either fails."""
    if not options.gguf.is_file():
        msg = f"no GGUF file at {options.gguf}"
        raise LlamaServerError(msg)
    missing = [str(path) for path in options.lora if not path.is_file()]
    if missing:
        msg = f"no LoRA adapter file at {', '.join(missing)}"
        raise LlamaServerError(msg)
    if importlib.util.find_spec("xllamacpp") is None:
        msg = f"llama.cpp's server (the xllamacpp package) is not installed: {INSTALL_HINT}"
        raise LlamaServerError(msg)
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(options.gguf)
    params.model_alias = {options.alias}  # a set of names: a plain string would become its letters
    params.hostnames = [options.host]
    params.port = options.port
    params.n_parallel = options.parallel
    params.n_ctx = options.ctx_per_slot * options.parallel
    if options.threads is not None:
        params.cpuparams.n_threads = options.threads
        params.cpuparams_batch.n_threads = options.threads
    if options.log_level is not None:
        params.verbosity = options.log_level
    if options.lora:
        params.lora_adapters = [xllamacpp.CommonAdapterLoraInfo(str(path), 1.0) for path in options.lora]
    try:
        handle = xllamacpp.Server(params)
    except RuntimeError as exc:
        msg = (f"llama.cpp could not serve {options.gguf} on {options.host}:{options.port} ({exc}): "
               "is the file a GGUF model, and the port free? its log above says more")
        raise LlamaServerError(msg) from exc
    return RunningServer(f"{handle.listening_address}/v1", options, handle)
