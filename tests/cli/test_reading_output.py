"""Commands that only read runs say nothing but what was asked (issue 31, smaller items): no log
line about the embedded server they start, and a reader that stops early (`| head -1`) is no error."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.support import ROOT, apollo


@pytest.mark.parametrize("args", [["runs"], ["show", "solve-abc1"], ["replay", "solve-abc1", "--verify"],
                                  ["diff", "solve-abc1", "solve-abd2"]], ids=lambda args: args[0])
def test_reading_commands_do_not_log_the_embedded_server(two_runs: Path, args: list[str]) -> None:
    """Reading commands do not log the embedded server's start."""
    code, out, err = apollo(two_runs, *args)
    assert code == 0 and out, err[-2000:]
    assert "embedded_server_started" not in err


def test_export_does_not_log_the_embedded_server(two_runs: Path, tmp_path: Path) -> None:
    """Export does not log the embedded server's start."""
    code, _, err = apollo(two_runs, "export", "--format", "jsonl", "--out", str(tmp_path / "x.jsonl"))
    assert code == 0, err[-2000:]
    assert "embedded_server_started" not in err


def test_runs_into_a_reader_that_stopped_reading_ends_quietly(two_runs: Path) -> None:
    """`apollo runs | head -1` with head long gone by the time the table is written: exit 0, nothing said."""
    env = {**os.environ, "APOLLO_DATA_DIR": str(two_runs)}
    env.pop("APOLLO_NATS_URL", None)
    read, write = os.pipe()
    os.close(read)  # the reader is gone before apollo writes anything
    try:
        done = subprocess.run([sys.executable, "-m", "engine", "runs"], cwd=ROOT, env=env, stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=100, check=False)
    finally:
        os.close(write)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr == ""
