"""`apollo rollouts` whose model server refused every call.

Each run ended ``run.completed`` with ``model_failed`` (`apollo runs` lists them as failed), but
the rollout driver counts only runs that did not complete, so the command said
``1 group (2 runs, 0 failed)`` and exited 0. Now they count as failed, and the exit status is 1.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.engine_support import fake_model_server
from tests.cli.support import DATASET, apollo

pytestmark = [pytest.mark.nats, pytest.mark.slow, pytest.mark.timeout(300)]


def test_rollouts_count_runs_their_model_server_failed_as_failed(tmp_path: Path) -> None:
    """A model the server does not serve: every run failed, in the progress line, the summary and the exit status."""
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    data = tmp_path / "data"
    with fake_model_server("--refuse-unlisted") as model:
        code, out, err = apollo(data, "rollouts", "--dataset", str(DATASET), "--limit", "1", "--samples", "2",
                                "--max-in-flight", "1", "--model", "not-served", "--model-url", model.url,
                                "--no-probe", "--json")
    assert code == 1, err[-2000:]
    assert json.loads(out)["runs_failed"] == 2
    assert "apollo rollouts: 1/1 groups ended, 0 open, 2 runs failed" in err
    assert "apollo rollouts: 2 of 2 runs failed (a model server or the engine did)" in err
    code, out, listing_err = apollo(data, "runs", "--json")
    assert code == 0, listing_err[-2000:]
    assert [row["status"] for row in json.loads(out)] == ["failed", "failed"]
