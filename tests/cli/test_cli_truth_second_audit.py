"""The command line says what happened: a second audit.

Each test below failed before its fix; its docstring says what the command said and what happened.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from structlog.testing import capture_logs

from engine.runtime.run_activity import RunActivity
from engine.testing.event_builders import started
from events import encode
from events.run import RunCompleted
from tests.cli.engine_support import FakeModel, fake_model_server, running_engine
from tests.cli.support import ROOT, apollo

EVOLVE = ROOT / "examples" / "configs" / "evolve_single.yaml"


def _dataset(tmp_path: Path, rows: int = 1) -> Path:
    path = tmp_path / "toy.jsonl"
    path.write_text(
        "".join(
            json.dumps({"id": f"t{i}", "question": f"What is {i} + 2 - {i}?", "answer": "2"}) + "\n"
            for i in range(rows)
        )
    )
    return path


@pytest.mark.nats
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_rollouts_count_an_evolve_run_whose_every_round_failed_as_failed(tmp_path: Path) -> None:
    """Rollouts said `0 failed` and exited 0 for an evolve run no round of which judged the model; runs said failed."""
    data = tmp_path / "data"
    with fake_model_server("--refuse-unlisted") as model:
        code, out, err = apollo(
            data,
            "rollouts",
            "--dataset",
            str(_dataset(tmp_path)),
            "--samples",
            "1",
            "--max-in-flight",
            "1",
            *_evolve_on_a_refusing_model(model.url),
            "--json",
        )
    assert code == 1, err[-2000:]
    assert json.loads(out)["runs_failed"] == 1
    assert "apollo rollouts: 1 of 1 runs failed" in err
    code, out, err = apollo(data, "runs", "--json")
    assert code == 0, err[-2000:]
    assert [row["status"] for row in json.loads(out)] == ["failed"]


def _evolve_on_a_refusing_model(url: str) -> list[str]:
    """Flags for an evolve run whose model the fake server refuses, so that no round judges it."""
    return ["--workflow", "evolve", "--config", str(EVOLVE), "--model", "not-served", "--model-url", url, "--no-probe"]


def _up_lines(tmp_path: Path, event: str, run_id: str) -> list[str]:
    return [
        line
        for line in (tmp_path / "up-data.log").read_text().splitlines()
        if f" {event} " in line and f"run_id={run_id} " in line
    ]


def _events(data: Path, run_id: str) -> list[dict[str, Any]]:
    code, out, err = apollo(data, "show", run_id, "--json")
    assert code == 0, err[-2000:]
    return [json.loads(line)["event"] for line in out.splitlines() if line.strip()]


@pytest.mark.nats
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_up_logs_a_fork_made_at_its_parents_last_event_finished_once(tmp_path: Path) -> None:
    """Up logged run_finished three times for a fork at the parent's last event (duplicates the stream dropped)."""
    data = tmp_path / "data"
    with fake_model_server() as model, running_engine(data):
        code, _, err = apollo(data, "solve", "What is 2+3?", "--answer", "5", "--run-id", "parent", "--no-probe")
        assert code == 0, err[-2000:]
        last = len(_events(data, "parent"))
        for fork in ("fork-a", "fork-b"):
            code, _, err = apollo(
                data,
                "fork",
                "parent",
                "--at",
                str(last),
                "--run-id",
                fork,
                "--model",
                "fake-model",
                "--model-url",
                model.url,
            )
            assert code == 0, err[-2000:]
            assert [e["type"] for e in _events(data, fork)].count("run.completed") == 1
        time.sleep(1.0)  # what the engine logs of the forks' appends
    for fork in ("fork-a", "fork-b"):
        assert len(_up_lines(tmp_path, "run_started", fork)) == 1
        assert len(_up_lines(tmp_path, "run_finished", fork)) == 1, _up_lines(tmp_path, "run_finished", fork)


@pytest.mark.nats
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_up_logs_an_evolve_run_whose_every_round_failed_as_failed(tmp_path: Path) -> None:
    """Up logged `status=completed score=0.0` for an evolve run no round of which judged the model (failed)."""
    data = tmp_path / "data"
    with fake_model_server("--refuse-unlisted") as model, running_engine(data):
        code, _, err = apollo(
            data,
            "solve",
            "What is 2+3?",
            "--answer",
            "5",
            *_evolve_on_a_refusing_model(model.url),
            "--run-id",
            "evolve-refused",
        )
        assert code == 1, err[-2000:]
        time.sleep(1.0)
    [line] = _up_lines(tmp_path, "run_finished", "evolve-refused")
    assert "status=failed" in line and "reason='not completed (model_failed)'" in line, line
    assert "score=" not in line


def test_up_logs_one_start_and_one_ending_when_the_same_appends_come_again() -> None:
    """A lifecycle message seen again (an append the stream dropped as a duplicate) gave a second log line."""
    activity = RunActivity()
    start = encode(started("r-dup"))
    ending = encode(
        RunCompleted(
            event_id="end", run_id="r-dup", occurred_at=datetime.now(UTC), done_reason="answer", answer="5", score=1.0
        )
    )
    with capture_logs() as logs:
        for data in (start, start, ending, ending, start):
            activity.seen(data, "s")
    assert [(line["event"], line["run_id"]) for line in logs if "run_id" in line] == [
        ("run_started", "r-dup"),
        ("run_finished", "r-dup"),
    ]


def _plan_faults(model: FakeModel, *faults: str) -> None:
    """The fake server's next requests fail so, one each."""
    request = urllib.request.Request(
        model.url.removesuffix("/v1") + "/fake/plan",
        method="POST",
        data=json.dumps({"plan": list(faults)}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=10):
        pass


@pytest.mark.nats
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_run_does_not_say_a_retry_fails_the_same_way_after_a_retry_of_it_passed(tmp_path: Path) -> None:
    """Run said an HTTP 400 `[a retry fails the same way]` although a retry of a run failed so had just completed."""
    data = tmp_path / "data"
    config = tmp_path / "one-try.yaml"
    config.write_text("models:\n  policy:\n    max_retries: 0\n")
    with fake_model_server() as model:
        command = [
            "--config",
            str(config),
            "run",
            "--dataset",
            str(_dataset(tmp_path, 2)),
            "--model",
            "fake-model",
            "--model-url",
            model.url,
            "--no-probe",
            "--concurrency",
            "1",
            "--out",
            str(tmp_path / "r.jsonl"),
        ]
        _plan_faults(model, "bad_request", "bad_request")
        code, _, err = apollo(data, *command)
        assert code == 1, err[-2000:]
        assert "[a retry fails the same way]" in err  # a 400: judged from its kind, nothing seen otherwise
        _plan_faults(model, "bad_request")  # one retry fails again, the other completes
        code, out, err = apollo(data, *command, "--json")
    assert code == 1, err[-2000:]
    assert "apollo run: retrying 2 run(s)" in err
    [line] = [line for line in err.splitlines() if line.startswith("  1 x ")]
    assert "HTTP 400: the fake server rejects this request on purpose" in line
    assert "[a retry fails the same way]" not in line
    assert "run the same command again to retry them" in err
    assert [(f["count"], f["retry_can_help"]) for f in json.loads(out.splitlines()[-1])["failures"]] == [(1, True)]


def _up(data: Path, *args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "APOLLO_DATA_DIR": str(data)}
    env.pop("APOLLO_NATS_URL", None)
    return subprocess.Popen(
        [sys.executable, "-m", "engine", "up", *args],
        cwd=ROOT,
        env=env,
        text=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )


def _stop(process: subprocess.Popen[str]) -> str:
    """Stop ``up`` if it still runs; its stderr."""
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    return err


def _listening_above_a_free_port() -> socket.socket:
    """A socket listening on a port whose port below was free when it was chosen."""
    for _ in range(100):
        taken = socket.socket()
        taken.bind(("0.0.0.0", 0))
        taken.listen()
        with socket.socket() as below:
            try:
                below.bind(("0.0.0.0", taken.getsockname()[1] - 1))
            except OSError:
                taken.close()
                continue
        return taken
    raise AssertionError("no free port with a free port below it")


@pytest.mark.nats
@pytest.mark.timeout(300)
def test_up_refuses_a_taken_metrics_port_of_a_worker_before_saying_it_runs(tmp_path: Path) -> None:
    """Up said `2 worker(s) ...; Ctrl-C to stop` and served with one when the second's metrics port was taken."""
    for attempt in range(3):  # another process on the machine may take the first worker's port meanwhile
        with _listening_above_a_free_port() as taken:
            port = taken.getsockname()[1]
            process = _up(tmp_path / f"data{attempt}", "--workers", "2", "--metrics-port", str(port - 1))
            try:
                code = process.wait(60)
            except subprocess.TimeoutExpired:
                code = None
            err = _stop(process)
        if f"cannot serve metrics on port {port - 1}:" not in err:
            break
    assert code == 1, err[-2000:]
    assert f"apollo: error: cannot serve metrics on port {port} (worker 2 of 2" in err
    assert "Ctrl-C to stop" not in err and "Traceback" not in err


@pytest.mark.nats
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_up_says_a_worker_process_that_ended_and_the_workers_left(tmp_path: Path) -> None:
    """Up said nothing when one of its `--workers 2` died: its start-up line still counted two."""
    log = tmp_path / "up-data.log"
    with running_engine(tmp_path / "data", "--workers", "2") as up:
        found = subprocess.run(
            ["pgrep", "-P", str(up.pid), "-f", "engine.* worker"], capture_output=True, text=True, check=False
        )
        [child] = found.stdout.split()
        os.kill(int(child), signal.SIGKILL)
        said = f"apollo up: worker process {child} ended (killed by signal 9): 1 of 2 worker(s) left"
        deadline = time.monotonic() + 30
        while said not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.2)
        assert up.poll() is None
    assert said in log.read_text(), log.read_text()[-3000:]


@pytest.mark.nats
@pytest.mark.slow
@pytest.mark.timeout(180)
def test_a_command_says_an_engines_server_died_not_its_up_when_up_still_runs(tmp_path: Path) -> None:
    """With up alive and its nats-server killed, a command said `its apollo up, pid N, is gone` of the live up."""
    data = tmp_path / "data"
    with running_engine(data) as up:
        [server] = subprocess.run(
            ["pgrep", "-P", str(up.pid), "nats-server"], capture_output=True, text=True, check=False
        ).stdout.split()
        os.kill(int(server), signal.SIGKILL)
        time.sleep(0.5)
        code, _, err = apollo(data, "runs")
        assert up.poll() is None
    assert code == 0, err[-2000:]
    assert f"(its nats-server, pid {server}, is gone; its `apollo up`, pid {up.pid}, still runs without it" in err
    assert f"`apollo up`, pid {up.pid}, is gone" not in err


CRASHING_GRADER = """
from engine.plugins import Plugin, grader


@grader("crash", description="raises on every answer")
def crash(answer, ground_truth, metadata):
    raise RuntimeError("this grader always fails")


plugin = Plugin(name="crashing", description="a grader that cannot grade", graders=[crash])
"""


@pytest.mark.nats
@pytest.mark.timeout(300)
def test_regrade_whose_grader_could_not_grade_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Regrade exited 0 when no grade could be computed (the grader failed; nothing recorded)."""
    (tmp_path / "crashing_grader.py").write_text(CRASHING_GRADER)
    monkeypatch.setenv("PYTHONPATH", str(tmp_path))
    config = tmp_path / "plugins.yaml"
    config.write_text("plugins:\n  - crashing_grader:plugin\n")
    data = tmp_path / "data"
    code, _, err = apollo(data, "solve", "What is 2+3?", "--answer", "5", "--run-id", "graded")
    assert code == 0, err[-2000:]
    code, out, err = apollo(data, "--config", str(config), "regrade", "graded", "--grader", "crash", "--json")
    assert code == 1, err[-2000:]
    assert "crash could not grade: RuntimeError: this grader always fails" in err
    assert "apollo regrade: 1 grade could not be computed: nothing recorded for them" in err
    assert json.loads(out)["regraded"] == 0
    assert "answer.regraded" not in [event["type"] for event in _events(data, "graded")]
