"""`solve` and `fork` check the model endpoint before submitting, and a run its model server
failed is reported as not completed, never as a wrong answer (issue 31, item 2)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.nats.server import free_port
from tests.cli.engine_support import FakeModel, fake_model_server, running_engine
from tests.cli.support import DATASET, apollo

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]

NO_RETRIES = "models:\n  policy:\n    max_retries: 0\n"


@pytest.fixture(scope="module")
def model() -> Iterator[FakeModel]:
    with fake_model_server("--refuse-unlisted") as fake:
        yield fake


@pytest.fixture(scope="module")
def parent(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A data dir with one finished scripted run to fork, and its id."""
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    data = tmp_path_factory.mktemp("forks") / "data"
    code, out, err = apollo(data, "solve", "--from-dataset", str(DATASET), "--json")
    assert code == 0, err[-2000:]
    return data, json.loads(out)["run_id"]


def _nothing_listening() -> str:
    return f"http://127.0.0.1:{free_port()}/v1"


def _errors(err: str) -> list[str]:
    return [line for line in err.splitlines() if line.startswith("apollo: error:")]


def _run_ids(data: Path) -> list[str]:
    code, out, err = apollo(data, "runs", "--json")
    assert code == 0, err[-2000:]
    return [row["run_id"] for row in json.loads(out)]


def test_solve_with_nothing_listening_at_the_model_url_says_refused_and_submits_nothing(tmp_path: Path) -> None:
    """Solve against a closed model port reports connection refused, not a timeout, and submits nothing."""
    url = _nothing_listening()
    code, out, err = apollo(tmp_path / "data", "solve", "What is 2+3?", "--answer", "5",
                            "--model", "smollm2", "--model-url", url)
    assert code == 1
    assert "grade:" not in out
    [error] = _errors(err)
    assert error.startswith(f"apollo: error: model 'smollm2' at {url} is not reachable: "
                            "cannot reach the model server: connection refused")
    assert error.endswith("nothing was submitted (--no-probe skips this check)")
    assert "imeout" not in error
    assert _run_ids(tmp_path / "data") == []


def test_solve_refuses_a_model_the_server_does_not_serve(model: FakeModel, tmp_path: Path) -> None:
    """Solve refuses a model the server does not serve, naming the models it does serve."""
    code, out, err = apollo(tmp_path / "data", "solve", "What is 2+3?", "--answer", "5",
                            "--model", "smollm2", "--model-url", model.url)
    assert code == 1
    assert "grade:" not in out
    assert _errors(err) == [f"apollo: error: model 'smollm2' at {model.url}: the server does not serve that model "
                            "(it serves: fake-model); nothing was submitted (--no-probe skips this check)"]


@pytest.mark.parametrize("command", [["solve", "What is 2+3?", "--answer", "5"],
                                     ["run", "--dataset", str(DATASET), "--limit", "1"]], ids=["solve", "run"])
def test_a_name_a_llama_cpp_like_server_answers_as_its_own_model_is_refused(command: list[str],
                                                                           tmp_path: Path) -> None:
    """llama.cpp answers any name with its one model: the run would be recorded under a name that never
    answered, so the command refuses, naming the model that did and submitting nothing."""
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    with fake_model_server("--answer-as-listed", "--model", "smollm2-135m-instruct") as served:
        code, out, err = apollo(tmp_path / "data", *command, "--model", "smollm2", "--model-url", served.url)
        assert served.calls("smollm2") == 1  # the probe's one-token question, no run's call
    assert code == 1
    assert "grade:" not in out
    [error] = _errors(err)
    assert error.startswith(f"apollo: error: model 'smollm2' at {served.url}: the server does not serve that model "
                            "(it serves: smollm2-135m-instruct); asked for it, 'smollm2-135m-instruct' answered: "
                            "use --model smollm2-135m-instruct; ")
    assert _run_ids(tmp_path / "data") == []


def test_solve_whose_model_server_fails_reports_the_run_not_completed_and_exits_1(tmp_path: Path) -> None:
    """--no-probe and a refused connection: the run ends model_failed, which is no wrong answer."""
    config = tmp_path / "no-retries.yaml"
    config.write_text(NO_RETRIES)
    code, out, err = apollo(tmp_path / "data", "solve", "What is 2+3?", "--answer", "5", "--no-probe",
                            "--model", "smollm2", "--model-url", _nothing_listening(), "--config", str(config))
    assert code == 1, err[-2000:]
    assert "wrong" not in out
    assert "(could not be completed: model_failed)" in out
    assert "grade:   none: the run could not be completed" in out
    assert "reason:  policy model call failed (connection): cannot reach the model server: connection refused" in out

    code, out, _ = apollo(tmp_path / "data", "solve", "What is 2+3?", "--answer", "5", "--no-probe", "--json",
                          "--model", "smollm2", "--model-url", _nothing_listening(), "--config", str(config))
    assert code == 1
    result = json.loads(out)
    assert (result["incomplete"], result["done_reason"]) == (True, "model_failed")
    assert "connection refused" in result["failure"]


@pytest.fixture(scope="module")
def refused(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding ``solve-refused``: run with --no-probe against a closed port, so it ended model_failed."""
    folder = tmp_path_factory.mktemp("refused")
    config = folder / "no-retries.yaml"
    config.write_text(NO_RETRIES)
    data = folder / "data"
    code, _, err = apollo(data, "solve", "What is 2+3?", "--answer", "5", "--no-probe", "--run-id", "solve-refused",
                          "--model", "smollm2", "--model-url", _nothing_listening(), "--config", str(config))
    assert code == 1, err[-2000:]
    return data


def test_runs_lists_a_run_its_model_server_failed_as_failed_with_why_and_no_score(refused: Path) -> None:
    """`apollo runs` agrees with solve: a model_failed run is failed (no score 0 beside "completed"), and
    --json names the failed call; `--status failed` finds it."""
    data = refused
    code, out, err = apollo(data, "runs")
    assert code == 0, err[-2000:]
    [row] = [line.split() for line in out.splitlines() if line.startswith("solve-refused")]
    assert row[6:8] == ["failed", "-"]
    code, out, _ = apollo(data, "runs", "--json", "--status", "failed")
    [listed] = json.loads(out)
    assert (listed["run_id"], listed["status"], listed["score"]) == ("solve-refused", "failed", None)
    assert listed["reason"].startswith("not completed (model_failed): policy model call failed (connection): "
                                       "cannot reach the model server: connection refused")


def test_show_and_the_page_say_a_run_its_model_server_failed_was_not_completed(refused: Path, tmp_path: Path) -> None:
    """The timeline's last line and the page's summary read 'not completed', with no score 0."""
    code, out, err = apollo(refused, "show", "solve-refused")
    assert code == 0, err[-2000:]
    last = out.splitlines()[-1]
    assert last.split()[2] == "run.completed"
    assert last.endswith("run not completed (model_failed): no answer was judged, so no score")
    page = tmp_path / "refused.html"
    code, _, err = apollo(refused, "show", "solve-refused", "--html", str(page))
    assert code == 0, err[-2000:]
    text = page.read_text()
    assert "not completed (model_failed): no answer was judged, so no score" in text
    assert "completed: model_failed" not in text


def test_apollo_up_logs_a_run_its_model_server_failed_as_failed_not_completed(tmp_path: Path) -> None:
    """The engine's run_finished line agrees with solve and `apollo runs`: failed, not completed with score 0;
    and a run that ended without an answer never logs Python's None as one."""
    config = tmp_path / "no-retries.yaml"
    config.write_text(NO_RETRIES)
    data = tmp_path / "data"
    with running_engine(data):
        code, _, err = apollo(data, "solve", "What is 2+3?", "--answer", "5", "--no-probe", "--run-id", "up-refused",
                              "--model", "smollm2", "--model-url", _nothing_listening(), "--config", str(config))
        assert code == 1, err[-2000:]
    [line] = [line for line in (tmp_path / "up-data.log").read_text().splitlines()
              if "run_finished" in line and "up-refused" in line]
    assert "status=failed" in line and "reason='not completed (model_failed)'" in line
    assert "score=" not in line and "None" not in line


def test_fork_with_nothing_listening_at_the_model_url_makes_no_fork(parent: tuple[Path, str]) -> None:
    """Fork against a closed model port reports connection refused and makes no fork."""
    data, run_id = parent
    url = _nothing_listening()
    runs = _run_ids(data)
    code, out, err = apollo(data, "fork", run_id, "--at", "2", "--model", "smollm2", "--model-url", url)
    assert code == 1
    assert out == ""
    [error] = _errors(err)
    assert error.startswith(f"apollo: error: model 'smollm2' at {url} is not reachable: "
                            "cannot reach the model server: connection refused")
    assert error.endswith("no fork was made (--no-probe skips this check)")
    assert _run_ids(data) == runs


def test_fork_refuses_a_model_the_server_does_not_serve(parent: tuple[Path, str], model: FakeModel) -> None:
    """Fork refuses a model the server does not serve, naming the models it does serve."""
    data, run_id = parent
    code, _, err = apollo(data, "fork", run_id, "--at", "2", "--model", "smollm2", "--model-url", model.url)
    assert code == 1
    assert _errors(err) == [f"apollo: error: model 'smollm2' at {model.url}: the server does not serve that model "
                            "(it serves: fake-model); no fork was made (--no-probe skips this check)"]


def test_fork_whose_model_server_fails_reports_the_fork_not_completed_and_exits_1(parent: tuple[Path, str],
                                                                                   tmp_path: Path) -> None:
    """A fork whose model server fails is reported as not completed (model_failed) and exits 1."""
    data, run_id = parent
    config = tmp_path / "no-retries.yaml"
    config.write_text(NO_RETRIES)
    code, out, err = apollo(data, "fork", run_id, "--at", "2", "--no-probe", "--model", "smollm2",
                            "--model-url", _nothing_listening(), "--config", str(config))
    assert code == 1, err[-2000:]
    assert "wrong" not in out
    assert "(could not be completed: model_failed)" in out
    assert "connection refused" in out


def test_solve_json_lists_a_run_its_model_server_failed_as_failed_with_no_score(refused: Path, tmp_path: Path) -> None:
    """`solve --json` for a run its model server failed says status failed and score null, as `apollo runs` does."""
    config = tmp_path / "no-retries.yaml"
    config.write_text(NO_RETRIES)
    code, out, err = apollo(refused, "solve", "What is 2+3?", "--answer", "5", "--no-probe", "--json",
                            "--run-id", "solve-refused-json", "--model", "smollm2",
                            "--model-url", _nothing_listening(), "--config", str(config))
    assert code == 1, err[-2000:]
    result = json.loads(out)
    assert (result["status"], result["score"], result["incomplete"]) == ("failed", None, True)
    code, out, _ = apollo(refused, "runs", "--json", "--status", "failed")
    listed = {row["run_id"]: row for row in json.loads(out)}
    assert (listed["solve-refused-json"]["status"], listed["solve-refused-json"]["score"]) == ("failed", None)
