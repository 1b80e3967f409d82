"""`apollo run` stopped with Ctrl-C while its runs wait on the model.

It printed only ``apollo: interrupted``: nothing said that the runs it had submitted are not
stopped (`apollo runs` lists them as running), that the same command resumes them, or how to
end one, as `solve` and `fork` say of theirs.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.cli.engine_support import fake_model_server
from tests.cli.support import DATASET, ROOT, apollo

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]


def _interrupted(tmp_path: Path, *args: str) -> tuple[Path, str]:
    """``apollo ARGS`` against a model that takes a minute, Ctrl-C once it made two calls: (data dir, stderr)."""
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    data = tmp_path / "data"
    env = {**os.environ, "APOLLO_DATA_DIR": str(data)}
    env.pop("APOLLO_NATS_URL", None)
    with fake_model_server("--latency-ms", "60000") as model:
        process = subprocess.Popen([sys.executable, "-m", "engine", *args, "--dataset", str(DATASET),
                                    "--model", "fake-model", "--model-url", model.url, "--no-probe"],
                                   cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                   start_new_session=True)
        deadline = time.monotonic() + 60
        while model.calls() < 2:
            assert process.poll() is None and time.monotonic() < deadline, f"{args[0]} made no model calls"
            time.sleep(0.1)
        os.killpg(process.pid, signal.SIGINT)
        assert process.wait(60) == 130
        assert process.stderr is not None
        return data, process.stderr.read().decode()


def test_an_interrupted_run_names_the_runs_it_leaves_and_how_to_take_them_up(tmp_path: Path) -> None:
    """Ctrl-C while both runs wait: exit 130, one line naming both, `runs` lists them as running."""
    data, err = _interrupted(tmp_path, "run", "--limit", "2", "--out", str(tmp_path / "results.jsonl"))
    (line,) = [line for line in err.splitlines() if "submitted and not ended" in line]
    assert line.startswith("apollo run: 2 run(s) submitted and not ended (gsm8k_reason-"), line
    assert "`apollo runs` lists them as running" in line and "the same command resumes them" in line
    code, out, listing_err = apollo(data, "runs", "--json")
    assert code == 0, listing_err[-2000:]
    assert [row["status"] for row in json.loads(out)] == ["running", "running"]


def test_interrupted_rollouts_name_the_runs_they_leave(tmp_path: Path) -> None:
    """Ctrl-C on `rollouts` while a group waits on the model: exit 130 and one line naming its runs."""
    _, err = _interrupted(tmp_path, "rollouts", "--limit", "1", "--samples", "2", "--max-in-flight", "1")
    (line,) = [line for line in err.splitlines() if "submitted and not ended" in line]
    assert line.startswith("apollo rollouts: 2 run(s) submitted and not ended ("), line
    assert "`apollo cancel RUN` ends one" in line
