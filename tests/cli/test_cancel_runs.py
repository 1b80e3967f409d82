"""Runs that tell the truth in `apollo runs` (issue 31, item 8): an interrupted `solve` can be
cancelled with `apollo cancel RUN --reason TEXT`, which `runs` and `show` display and workers
respect; a fork is listed from when it was made, not from when its parent began."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.cli.engine_support import FakeModel, fake_model_server, finished, running_engine
from tests.cli.support import ROOT, apollo, copy_of

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]


def _rows(data: Path) -> dict[str, dict]:
    code, out, err = apollo(data, "runs", "--json")
    assert code == 0, err[-2000:]
    return {row["run_id"]: row for row in json.loads(out)}


def _interrupted_solve(data: Path, model: FakeModel, run_id: str) -> str:
    """`apollo solve` against a slow model, stopped with Ctrl-C while its first call waits; its stderr."""
    env = {**os.environ, "APOLLO_DATA_DIR": str(data)}
    env.pop("APOLLO_NATS_URL", None)
    calls = model.calls()
    process = subprocess.Popen([sys.executable, "-m", "engine", "solve", "What is 2+3?", "--answer", "5",
                                "--model", "fake-model", "--model-url", model.url, "--no-probe", "--run-id", run_id],
                               cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                               start_new_session=True)
    deadline = time.monotonic() + 60
    while model.calls() == calls:
        assert process.poll() is None and time.monotonic() < deadline, "solve made no model call"
        time.sleep(0.1)
    os.killpg(process.pid, signal.SIGINT)
    assert process.wait(60) == 130
    assert process.stderr is not None
    return process.stderr.read().decode()


def test_an_interrupted_solve_is_cancelled_shown_as_such_and_left_alone_by_workers(tmp_path: Path) -> None:
    """A cancelled interrupted solve is listed and shown as cancelled, and later workers never resume it."""
    data = tmp_path / "data"
    with fake_model_server("--latency-ms", "4000") as model:
        _interrupted_solve(data, model, "solve-stopped")
        assert _rows(data)["solve-stopped"]["status"] == "running"

        code, _, err = apollo(data, "cancel", "solve-sto", "--reason", "stopped by hand")
        assert code == 0, err[-2000:]
        assert "solve-stopped cancelled: stopped by hand" in err
        row = _rows(data)["solve-stopped"]
        assert row["status"] == "cancelled" and row["reason"].startswith("stopped by hand (by ")
        code, out, _ = apollo(data, "runs", "--status", "cancelled")
        assert code == 0 and "solve-stopped" in out and "cancelled" in out
        code, out, _ = apollo(data, "show", "solve-stopped")
        assert out.splitlines()[-1].split()[2] == "run.cancelled" and out.rstrip().endswith(": stopped by hand")

        # An engine started later gets the interrupted call back and makes it no more.
        with running_engine(data):
            code, out, err = apollo(data, "submit", "What is 2+3?", "--answer", "5", "--run-id", "after-cancel")
            assert code == 0, err[-2000:]
            finished(data, "after-cancel")
        assert model.calls() == 1
    code, out, _ = apollo(data, "show", "solve-stopped", "--json")
    assert json.loads(out.splitlines()[-1])["event"]["type"] == "run.cancelled"

    code, _, err = apollo(data, "cancel", "solve-stopped")
    assert code == 0 and "already cancelled by" in err and "stopped by hand" in err
    code, _, err = apollo(data, "cancel", "after-cancel")
    assert code == 1
    assert err.strip().splitlines()[-1] == "apollo: error: run after-cancel has already completed: nothing to cancel"
    code, _, err = apollo(data, "cancel", "no-such-run")
    assert code == 1 and "unknown run 'no-such-run'" in err


def test_an_interrupted_solve_names_the_run_it_leaves_and_how_to_end_it(tmp_path: Path) -> None:
    """Ctrl-C ends the command, not the run: solve says the run is left running (or goes on in the
    running engine) and that `apollo cancel RUN` ends it."""
    with fake_model_server("--latency-ms", "4000") as model:
        err = _interrupted_solve(tmp_path / "alone", model, "solve-alone")
        with running_engine(tmp_path / "engine"):  # a data dir of its own: no left run for it to resume
            engine_err = _interrupted_solve(tmp_path / "engine", model, "solve-engine")
    assert ("apollo solve: run solve-alone is left unfinished: `apollo runs` lists it as running, and workers "
            "started later (`apollo up`, another solve or run here) go on with it; "
            "`apollo cancel solve-alone --reason TEXT` ends it") in err
    assert ("apollo solve: run solve-engine goes on in the running engine (`apollo show solve-engine` shows how "
            "far it got); `apollo cancel solve-engine --reason TEXT` ends it") in engine_err


def test_a_cancelled_run_still_verifies(tmp_path: Path) -> None:
    """`replay --verify` re-decides a cancelled run up to its cancellation and finds it deterministic."""
    data = tmp_path / "data"
    with fake_model_server("--latency-ms", "4000") as model:
        _interrupted_solve(data, model, "solve-verify")
    assert apollo(data, "cancel", "solve-verify")[0] == 0
    code, out, err = apollo(data, "replay", "solve-verify", "--verify")
    assert code == 0, out + err[-2000:]
    assert "deterministic" in out


def test_a_fork_is_listed_from_when_it_was_made(two_runs: Path, tmp_path: Path) -> None:
    """A fork made after its parent ended starts after that end, and its time is its own."""
    two_runs = copy_of(two_runs, tmp_path)  # the fork stays out of the runs other tests list
    code, _, err = apollo(two_runs, "fork", "solve-abc1", "--at", "3", "--run-id", "fork-when")
    assert code == 0, err[-2000:]
    rows = _rows(two_runs)
    parent, fork = rows["solve-abc1"], rows["fork-when"]
    parent_end = datetime.fromisoformat(parent["started"]) + timedelta(seconds=parent["duration_s"])
    assert datetime.fromisoformat(fork["started"]) >= parent_end
    assert fork["status"] == "completed" and 0 < fork["duration_s"] < 120


def test_fork_no_wait_without_an_engine_says_no_worker_runs_it_yet(two_runs: Path, tmp_path: Path) -> None:
    """`fork --no-wait` starts no workers: with no engine it must not claim in-process workers run the fork."""
    two_runs = copy_of(two_runs, tmp_path)  # the fork stays out of the runs other tests list
    code, out, err = apollo(two_runs, "fork", "solve-abc1", "--at", "3", "--no-wait", "--run-id", "fork-idle")
    assert code == 0, err[-2000:]
    assert out.strip() == "fork-idle"
    assert "in-process workers" not in err
    assert ("no engine runs here and --no-wait starts no workers: it runs once workers start (`apollo up`)"
            in err)
    assert _rows(two_runs)["fork-idle"]["status"] == "running"


def test_a_solve_whose_run_was_cancelled_elsewhere_reports_it_cancelled() -> None:
    """`solve` prints the outcome: a run cancelled from another terminal is cancelled, with why."""
    from datetime import UTC, datetime

    from engine.app.operations import outcome
    from engine.testing.event_builders import submitted
    from events.record import Recorded
    from events.run import RunCancelled

    cancelled = RunCancelled(event_id="c-1", run_id="r-1", occurred_at=datetime.now(UTC), reason="wrong model",
                             by="ana@host")
    result = outcome([Recorded(1, "s", submitted()), Recorded(2, "s", cancelled)])
    assert (result["status"], result["reason"], result["incomplete"]) == (
        "cancelled", "cancelled by ana@host: wrong model", True)
