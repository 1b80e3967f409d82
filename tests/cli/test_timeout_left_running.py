"""`solve --timeout` and `fork --timeout` that pass: the command ends, the run does not.

Ctrl-C already named the run it leaves and `apollo cancel`, but a passed ``--timeout`` said only
``run X did not finish within 2s``, as if the run had been stopped; it goes on (in a running
engine, or when workers start here again) and `apollo runs` lists it as running.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.engine_support import FakeModel, fake_model_server
from tests.cli.support import apollo, copy_of

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]


@pytest.fixture(scope="module")
def slow_model() -> Iterator[FakeModel]:
    """A model server whose every reply takes 60 s."""
    with fake_model_server("--latency-ms", "60000") as fake:
        yield fake


def _left_line(err: str, run_id: str) -> None:
    (line,) = [line for line in err.splitlines() if line.startswith("apollo: error:")]
    assert line.startswith(f"apollo: error: run {run_id} did not finish within 2s: the run is left unfinished: "
                           "`apollo runs` lists it as running"), line
    assert line.endswith(f"`apollo cancel {run_id} --reason TEXT` ends it"), line


def test_solve_whose_timeout_passed_says_the_run_is_left_running(slow_model: FakeModel, tmp_path: Path) -> None:
    """The timeout's line names the run, says it is not stopped, and how to end it; `runs` agrees."""
    data = tmp_path / "data"
    code, out, err = apollo(data, "solve", "What is 2+3?", "--answer", "5", "--model", "fake-model", "--model-url",
                            slow_model.url, "--timeout", "2", "--run-id", "slow-solve")
    assert code == 1, err[-2000:]
    _left_line(err, "slow-solve")
    code, out, err = apollo(data, "runs")
    assert code == 0, err[-2000:]
    assert re.search(r"^slow-solve\s.*\brunning\b", out, re.MULTILINE), out


def test_fork_whose_timeout_passed_says_the_fork_is_left_running(two_runs: Path, slow_model: FakeModel,
                                                                 tmp_path: Path) -> None:
    """Fork --timeout: the same line, naming the fork."""
    data = copy_of(two_runs, tmp_path)  # the fork stays out of the runs other tests list
    code, _, err = apollo(data, "fork", "solve-abc1", "--at", "2", "--model", "fake-model", "--model-url",
                          slow_model.url, "--timeout", "2", "--run-id", "fork-slow")
    assert code == 1, err[-2000:]
    _left_line(err, "fork-slow")
