"""`apollo export` with no sample to write: it says so, exits 1, and leaves an earlier file as it was.

Filters that matched nothing already wrote nothing and exited 1, but an export that read
trajectories and skipped every one (an `--reward-source regraded` before any regrade, a
`--layout sft` bar nobody reaches), or a data dir with no run yet, replaced ``--out`` with an
empty file and exited 0: a training set swapped for nothing, reported as a success.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.support import apollo

pytestmark = [pytest.mark.nats]


def test_export_of_an_empty_log_writes_nothing_and_fails(tmp_path: Path) -> None:
    """With no run recorded, export says so, exits 1 and creates no file."""
    out = tmp_path / "samples.jsonl"
    code, stdout, err = apollo(tmp_path / "data", "export", "--format", "jsonl", "--out", str(out))
    assert (code, stdout) == (1, ""), err[-2000:]
    assert "no sealed trajectory is recorded (in the event log); nothing written" in err
    assert not out.exists()


def test_export_that_skips_every_trajectory_keeps_the_earlier_file(two_runs: Path, tmp_path: Path) -> None:
    """Every trajectory skipped: exit 1, the reasons counted, and the file from an earlier export untouched."""
    out = tmp_path / "samples.jsonl"
    code, stdout, err = apollo(two_runs, "export", "--format", "jsonl", "--out", str(out))
    assert code == 0, err[-2000:]
    earlier = out.read_bytes()
    assert json.loads(stdout)["rows"] > 0
    code, stdout, err = apollo(two_runs, "export", "--format", "jsonl", "--layout", "sft", "--sft-min-score", "2",
                               "--out", str(out))
    assert (code, stdout) == (1, ""), err[-2000:]
    assert f"no sample to write: all 2 trajectories were skipped; nothing written ({out} is left as it was)" in err
    assert "trajectory: not correct for sft (ground_truth" in err
    assert out.read_bytes() == earlier
    assert [p.name for p in tmp_path.iterdir()] == ["samples.jsonl"]
