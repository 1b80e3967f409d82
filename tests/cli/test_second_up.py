"""A second `apollo up` on a data dir whose engine runs refuses in one line naming that engine
(issue 31, item 9), instead of joining it unannounced ("on NATS at None")."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from engine.runtime.engine_state import STATE_FILE
from tests.cli.engine_support import running_engine
from tests.cli.support import ROOT, apollo

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]


def _up_again(data: Path) -> tuple[int, str]:
    """`apollo up` once more; a process still running after the bound has joined (killed, code None)."""
    env = {**os.environ, "APOLLO_DATA_DIR": str(data)}
    env.pop("APOLLO_NATS_URL", None)
    process = subprocess.Popen([sys.executable, "-m", "engine", "up"], cwd=ROOT, env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _, err = process.communicate(timeout=45)
    except subprocess.TimeoutExpired:
        process.terminate()
        _, err = process.communicate(timeout=60)
        pytest.fail(f"the second apollo up kept running (it joined the first): {err[-2000:]}")
    return process.returncode, err


def test_a_second_up_names_the_running_engine_and_refuses(tmp_path: Path) -> None:
    """A second `apollo up` on the same data dir names the running engine, refuses, and leaves it untouched."""
    data = tmp_path / "data"
    with running_engine(data) as first:
        state = json.loads((data / STATE_FILE).read_text())
        code, err = _up_again(data)
        assert code == 1
        assert err.strip().splitlines() == [
            f"apollo: error: an engine is already running on this data dir: NATS at {state['url']}, "
            f"`apollo up` pid {first.pid}, state file {data / STATE_FILE}; add workers to it with `apollo worker`, "
            "or stop it first (APOLLO_DATA_DIR=DIR runs a separate engine)"]
        assert "None" not in err
        assert json.loads((data / STATE_FILE).read_text()) == state  # the first engine is untouched
        code, _, err = apollo(data, "submit", "What is 2+3?")
        assert code == 0, err[-2000:]
        assert f"running engine at {state['url']}" in err
