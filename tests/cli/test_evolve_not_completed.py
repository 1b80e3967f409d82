"""`solve --workflow evolve` whose policy model server refused every round's call.

Each round's policy episode ended ``model_failed`` and the run still recorded ``run.completed``
(``evolved``, no answer, score 0), so `solve` printed ``grade: wrong (score 0, chosen round)``
and exited 0: a model server that answered nothing, reported as the model's wrong answer.
Now such a run is reported as not completed, with the reason, and exits 1.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.cli.engine_support import FakeModel, fake_model_server
from tests.cli.support import ROOT, apollo

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]

CONFIG = ROOT / "examples" / "configs" / "evolve_single.yaml"
"""3 rounds of 5 verifiers; the verifiers, summarizer and aggregator are the scripted demo."""


@pytest.fixture(scope="module")
def model() -> Iterator[FakeModel]:
    """A server that answers a model it does not list with 404, as vLLM does."""
    with fake_model_server("--refuse-unlisted") as fake:
        yield fake


def _solve(data: Path, model: FakeModel, *flags: str) -> tuple[int, str, str]:
    return apollo(data, "solve", "What is 2+3?", "--answer", "5", "--workflow", "evolve", "--config", str(CONFIG),
                  "--model", "not-served", "--model-url", model.url, "--no-probe", *flags)


def test_evolve_solve_whose_every_round_failed_is_not_reported_wrong(model: FakeModel, tmp_path: Path) -> None:
    """Every round's policy call refused: not completed, with the server's reason, exit 1; no grade."""
    code, out, err = _solve(tmp_path / "data", model)
    assert code == 1, err[-2000:]
    assert re.search(r"^run:\s+\S+ \(could not be completed: model_failed\)$", out, re.MULTILINE), out
    assert "grade:   none: the run could not be completed" in out
    assert "wrong" not in out.split("\nrun:", 1)[1]
    assert re.search(r"^rounds:\s+3 \(3 could not be completed\)$", out, re.MULTILINE), out
    assert re.search(r"^reason:\s+policy model call failed \(\w+\): .*404", out, re.MULTILINE), out


def test_evolve_solve_json_lists_the_failed_run_with_no_score(model: FakeModel, tmp_path: Path) -> None:
    """--json: status failed, score null, done_reason model_failed, exit 1."""
    code, out, err = _solve(tmp_path / "data", model, "--json")
    assert code == 1, err[-2000:]
    result = json.loads(out)
    assert (result["status"], result["score"], result["done_reason"]) == ("failed", None, "model_failed")
    assert result["rounds"] == result["rounds_failed"] == 3


def test_evolve_run_whose_every_round_failed_is_listed_failed_with_no_score(model: FakeModel, tmp_path: Path) -> None:
    """`apollo runs` and the results row read the same run as failed, not completed with score 0."""
    data = tmp_path / "data"
    code, out, err = _solve(data, model, "--json")
    assert code == 1, err[-2000:]
    run_id = json.loads(out)["run_id"]
    code, out, err = apollo(data, "runs", "--json")
    assert code == 0, err[-2000:]
    [row] = [row for row in json.loads(out) if row["run_id"] == run_id]
    assert (row["status"], row["score"]) == ("failed", None), row
    assert "model_failed" in (row.get("reason") or ""), row
