"""Every command that starts runs runs them with its own model, endpoint and config, whether
its own workers run them or those of a running `apollo up` started with other settings
(issue 31, item 1). The engine here runs the scripted demo; each command names the fake
model server and a config file, and the run's ``run.started`` must record those, the fake
server must be the one called, and the command must say where the runs went.
"""

from __future__ import annotations

import json
import re
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.runtime.engine_state import STATE_FILE
from tests.cli.engine_support import FakeModel, fake_model_server, finished, recorded, run_started, running_engine
from tests.cli.support import DATASET, apollo

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]

CONFIG = "episode:\n  max_steps: 3\nmodels:\n  policy:\n    temperature: 0.25\n"
"""What each command's --config sets (the engine's own: 4 steps, temperature 0.7)."""


@pytest.fixture(scope="module")
def model() -> Iterator[FakeModel]:
    with fake_model_server() as fake:
        yield fake


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The data dir of an `apollo up` running with the default settings (the scripted demo)."""
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    data = tmp_path_factory.mktemp("engine") / "data"
    with running_engine(data):
        yield data


@pytest.fixture(params=["engine", "own"], ids=["with_apollo_up", "without_apollo_up"])
def data(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    return request.getfixturevalue("engine") if request.param == "engine" else tmp_path / "data"


def _flags(model: FakeModel, tmp_path: Path) -> list[str]:
    config = tmp_path / "settings.yaml"
    config.write_text(CONFIG)
    return ["--model", "fake-model", "--model-url", model.url, "--config", str(config)]


def _assert_ran_as_asked(events: list[dict], model: FakeModel) -> None:
    settings = run_started(events)["settings"]
    policy = settings["models"]["policy"]
    assert (policy["model"], policy["base_url"], policy["temperature"]) == ("fake-model", model.url, 0.25)
    assert settings["episode"]["max_steps"] == 3
    assert any(e["type"] == "model.responded" for e in events)


def _assert_said_where(err: str, command: str, model: FakeModel, with_engine: bool) -> None:
    assert f"apollo {command}: policy model fake-model at {model.url}; " in err, err[-2000:]
    if with_engine:
        assert "running engine at nats://" in err
        assert "its workers use this command's settings" in err
    else:
        assert "embedded nats-server + in-process workers" in err


def _with_engine(data: Path) -> bool:
    return (data / STATE_FILE).exists()  # `apollo up` runs there (a command's own server is gone by now)


def test_solve_runs_the_model_endpoint_and_config_it_names(data: Path, model: FakeModel, tmp_path: Path) -> None:
    """Solve runs with the model, endpoint and config its flags name, and says where it ran."""
    calls = model.calls()
    code, out, err = apollo(data, "solve", "--from-dataset", str(DATASET), *_flags(model, tmp_path))
    assert code == 0, err[-2000:]
    run_id = re.search(r"^run:\s+(\S+)", out, re.MULTILINE).group(1)
    _assert_ran_as_asked(recorded(data, run_id), model)
    assert model.calls() > calls
    _assert_said_where(err, "solve", model, _with_engine(data))


def test_submit_hands_the_engine_its_model_endpoint_and_config(engine: Path, model: FakeModel,
                                                              tmp_path: Path) -> None:
    """Submit hands the running engine the model, endpoint and config its flags name."""
    calls = model.calls()
    code, out, err = apollo(engine, "submit", "--from-dataset", str(DATASET), *_flags(model, tmp_path))
    assert code == 0, err[-2000:]
    _assert_ran_as_asked(finished(engine, out.strip()), model)
    assert model.calls() > calls
    _assert_said_where(err, "submit", model, with_engine=True)


def test_submit_without_an_engine_refuses_in_one_line(model: FakeModel, tmp_path: Path) -> None:
    """Submit without a running engine refuses in one line saying how to start one."""
    code, out, err = apollo(tmp_path / "data", "submit", "What is 2+3?", *_flags(model, tmp_path))
    assert code == 1
    assert out == ""
    assert [line for line in err.splitlines() if "apollo" in line] == [
        "apollo: error: no apollo engine is running: start one with `apollo up` (or set APOLLO_NATS_URL)"]


def test_run_runs_the_model_endpoint_and_config_it_names(data: Path, model: FakeModel, tmp_path: Path) -> None:
    """Run uses the model, endpoint and config its flags name, also on a running engine's workers."""
    calls = model.calls()
    out_file = tmp_path / "results.jsonl"
    code, _, err = apollo(data, "run", "--dataset", str(DATASET), "--limit", "1", "--out", str(out_file),
                          *_flags(model, tmp_path))
    assert code == 0, err[-2000:]
    (row,) = [json.loads(line) for line in out_file.read_text().splitlines()]
    _assert_ran_as_asked(recorded(data, row["run_id"]), model)
    assert model.calls() > calls
    if _with_engine(data):
        assert "the running engine's workers run these runs with this command's settings" in err


def test_fork_runs_the_model_endpoint_and_config_it_names(data: Path, model: FakeModel, tmp_path: Path) -> None:
    """The parent ran the scripted demo; the fork, from its run.started on, the fake server."""
    code, out, err = apollo(data, "solve", "--from-dataset", str(DATASET), "--json")
    assert code == 0, err[-2000:]
    parent = json.loads(out)["run_id"]
    calls = model.calls()
    code, out, err = apollo(data, "fork", parent, "--at", "2", *_flags(model, tmp_path))
    assert code == 0, err[-2000:]
    fork_id = out.splitlines()[0]
    assert re.search(rf"^run:\s+{fork_id} \(completed, answer\)$", out, re.MULTILINE), out
    assert re.search(r"^grade:\s+correct", out, re.MULTILINE), out
    _assert_ran_as_asked(recorded(data, fork_id), model)
    assert model.calls() > calls
    _assert_said_where(err, "fork", model, _with_engine(data))


def test_rollouts_run_the_model_endpoint_and_config_they_name(data: Path, model: FakeModel,
                                                              tmp_path: Path) -> None:
    """Rollouts run with the model, endpoint and config their flags name."""
    calls = model.calls()
    prefix = f"travel-{uuid.uuid4().hex[:8]}"
    code, _, err = apollo(data, "rollouts", "--dataset", str(DATASET), "--limit", "1", "--samples", "2",
                          "--max-in-flight", "1", "--prefix", prefix, *_flags(model, tmp_path))
    assert code == 0, err[-2000:]
    _assert_said_where(err, "rollouts", model, _with_engine(data))
    code, out, listing_err = apollo(data, "runs", "--json")
    assert code == 0, listing_err[-2000:]
    run_ids = [row["run_id"] for row in json.loads(out) if row["run_id"].startswith(prefix)]
    assert len(run_ids) == 2
    for run_id in run_ids:
        _assert_ran_as_asked(recorded(data, run_id), model)
    assert model.calls() > calls
