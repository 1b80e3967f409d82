"""`apollo runs` over the index of runs: paging back with --before, a damaged index file said and rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.support import apollo, copy_of


def test_limit_then_before_pages_through_every_run(two_runs: Path) -> None:
    """--limit 1 names the next page's --before, and that page holds the other run."""
    code, out, err = apollo(two_runs, "runs", "--limit", "1")
    assert code == 0, err[-2000:]
    first = out.splitlines()[1].split()[0]
    assert f"older runs: add --before {first}" in err
    code, out, err = apollo(two_runs, "runs", "--json", "--before", first)
    assert code == 0, err[-2000:]
    assert [row["run_id"] for row in json.loads(out)] == sorted({"solve-abc1", "solve-abd2"} - {first})
    code, out, err = apollo(two_runs, "runs", "--before", "no-such-run")
    assert code == 1 and "no such run" in err


def test_a_garbage_index_file_is_reported_and_rebuilt(two_runs: Path, tmp_path: Path) -> None:
    """An index file overwritten with garbage is named on stderr, rebuilt, and the listing is whole."""
    data = copy_of(two_runs, tmp_path)
    assert apollo(data, "runs")[0] == 0
    files = sorted((data / "index").glob("runs-*.sqlite"))
    assert files, "the listing made the index"
    for path in files:
        path.write_bytes(b"\x00garbage" * 512)
        for extra in ("-wal", "-shm"):
            path.with_name(path.name + extra).unlink(missing_ok=True)
    code, out, err = apollo(data, "runs", "--json")
    assert code == 0, err[-2000:]
    assert "rebuilt from the log" in err
    assert {row["run_id"] for row in json.loads(out)} >= {"solve-abc1", "solve-abd2"}
