"""llama.cpp's own server (``apollo model serve``) on a free port with the set-up's SmolLM2-135M GGUF.

Skipped, with the reason, where the GGUF or the xllamacpp wheel is not installed (./setup.sh
installs both). The server runs as a separate process, as a user runs it, so a test can kill one.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALIAS = "smollm2"
CTX = 1024
"""Context per request slot: small, so an overflow is cheap to provoke."""
START_S = 60.0


@dataclass(frozen=True)
class LlamaServer:
    """A running `apollo model serve` process and its OpenAI-compatible base URL."""

    url: str
    process: subprocess.Popen[str]
    said: str
    """The line after the URL: the model name and the context per request."""


def _gguf() -> Path:
    from engine.training.model_package import ModelPackageMissing, gguf_path

    if importlib.util.find_spec("xllamacpp") is None:
        pytest.skip("llama.cpp's server is not installed (pip install xllamacpp; ./setup.sh does)")
    try:
        return gguf_path()
    except ModelPackageMissing as exc:
        pytest.skip(f"the SmolLM2 GGUF is not installed: {exc}")


def start_server(log: Path, *, parallel: int = 2) -> LlamaServer:
    """`apollo model serve GGUF --port 0` until it answers /health; its log goes to ``log``."""
    gguf = _gguf()
    command = [sys.executable, "-m", "engine", "model", "serve", str(gguf), "--port", "0", "--alias", ALIAS,
               "--ctx", str(CTX), "--parallel", str(parallel)]
    with log.open("w") as err:
        process = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=err, text=True)
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    said = process.stdout.readline().strip()
    if not url.startswith("http"):
        process.kill()
        pytest.fail(f"apollo model serve did not print its URL: {log.read_text()[-2000:]}")
    deadline = time.monotonic() + START_S
    while True:
        try:
            with urllib.request.urlopen(url.removesuffix("/v1") + "/health", timeout=2) as reply:
                if reply.status == 200:
                    return LlamaServer(url, process, said)
        except OSError:
            pass
        if process.poll() is not None or time.monotonic() > deadline:
            process.kill()
            pytest.fail(f"llama.cpp's server did not become healthy: {log.read_text()[-2000:]}")
        time.sleep(0.2)


def stop_server(server: LlamaServer) -> None:
    if server.process.poll() is None:
        server.process.terminate()
        try:
            server.process.wait(20)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(20)


@pytest.fixture(scope="session")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    """One llama.cpp server for the session's tests."""
    server = start_server(tmp_path_factory.mktemp("llama") / "server.log")
    try:
        yield server
    finally:
        stop_server(server)
