"""Recorded runs the command-line tests read (made once per session: each takes a few seconds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli.support import DATASET, apollo


@pytest.fixture(scope="session")
def two_runs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A data dir holding two finished GSM8K runs whose ids share the prefix ``solve-ab``."""
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    data = tmp_path_factory.mktemp("views") / "data"
    for index, run_id in ((0, "solve-abc1"), (1, "solve-abd2")):
        code, _, err = apollo(data, "solve", "--from-dataset", str(DATASET), "--index", str(index),
                              "--run-id", run_id)
        assert code == 0, err[-2000:]
    return data
