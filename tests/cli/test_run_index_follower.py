"""`apollo up` keeps the index of runs caught up as it records, with no reader asking."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

from tests.cli.engine_support import running_engine
from tests.cli.support import apollo


def _indexed_status(data: Path, run_id: str) -> str | None:
    """The run's status in any index file of the data dir, read with sqlite3 (no apollo reader runs)."""
    for path in (data / "index").glob("runs-*.sqlite"):
        with sqlite3.connect(path) as db:
            try:
                found = db.execute("SELECT row FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            except sqlite3.Error:
                continue
        if found:
            return json.loads(found[0])["status"]
    return None


def test_apollo_up_folds_a_submitted_run_into_the_index(tmp_path: Path) -> None:
    """A run submitted to a running engine reaches the index as completed without any read command."""
    data = tmp_path / "data"
    with running_engine(data):
        code, _, err = apollo(data, "submit", "What is 2 + 3?", "--answer", "5", "--run-id", "follow-1")
        assert code == 0, err[-2000:]
        deadline = time.monotonic() + 90
        while _indexed_status(data, "follow-1") != "completed":
            assert time.monotonic() < deadline, f"index says {_indexed_status(data, 'follow-1')!r}"
            time.sleep(0.5)
