"""`apollo doctor` words an unusable model endpoint as `solve` and `run` do: a refused connection is called
refused (not a urllib exception), and the fix names the command that serves a model here (issue 31, item 2)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from engine.nats.server import free_port
from tests.cli.support import ROOT


def _doctor(data: Path, url: str) -> tuple[int, list[str]]:
    """`apollo doctor` with the policy model at ``url``: its exit code and its models lines."""
    env = {**os.environ, "APOLLO_DATA_DIR": str(data), "APOLLO_MODEL_URL": url, "APOLLO_MODEL": "smollm2"}
    env.pop("APOLLO_NATS_URL", None)
    done = subprocess.run([sys.executable, "-m", "engine", "doctor"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=100, check=False)
    lines = (done.stdout + done.stderr).splitlines()
    at = next(i for i, line in enumerate(lines) if "models: policy" in line)
    return done.returncode, lines[at:at + 2]


def test_doctor_calls_a_closed_model_port_refused_and_names_apollo_model_serve(tmp_path: Path) -> None:
    """Nothing listening at the model URL: one line saying connection refused; the fix names `apollo model serve`."""
    url = f"http://127.0.0.1:{free_port()}/v1"
    code, (line, fix) = _doctor(tmp_path / "data", url)
    assert code == 1
    assert line.startswith(f"[FAIL] models: policy: model 'smollm2' at {url} is not reachable: "
                           "cannot reach the model server: connection refused")
    assert "URLError" not in line and "Errno" not in line
    assert "`apollo model serve`" in fix
