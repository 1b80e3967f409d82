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


def test_apollo_worker_says_which_engine_it_joined_and_when_it_stops(tmp_path: Path) -> None:
    """`apollo worker` beside a running `apollo up` names the engine's NATS URL, and says it stopped on SIGTERM."""
    data = tmp_path / "data"
    with running_engine(data):
        url = json.loads((data / STATE_FILE).read_text())["url"]
        env = {**os.environ, "APOLLO_DATA_DIR": str(data)}
        env.pop("APOLLO_NATS_URL", None)
        process = subprocess.Popen([sys.executable, "-m", "engine", "worker"], cwd=ROOT, env=env,
                                   stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        assert process.stderr is not None
        try:
            first = process.stderr.readline()
            while first and not first.startswith("apollo worker:"):  # log lines may come first
                first = process.stderr.readline()
        finally:  # a worker that never says so is still stopped when the test gives up on it
            process.terminate()
            rest = process.communicate(timeout=60)[1]
    assert first.strip() == f"apollo worker: joined the engine on NATS at {url}; Ctrl-C to stop"
    assert rest.strip().splitlines()[-1] == "apollo worker: stopped"
