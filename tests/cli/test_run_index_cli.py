"""`apollo runs` over the index of runs: paging back with --before, a damaged index file said and rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.support import apollo, copy_of


def test_limit_then_before_pages_through_every_run(two_runs: Path) -> None:
    """--limit 1 names the next page's --before; following it visits every run once, newest first."""
    code, out, err = apollo(two_runs, "runs", "--json")
    assert code == 0, err[-2000:]
    everything = [row["run_id"] for row in json.loads(out)]
    paged: list[str] = []
    flags = ["--limit", "1"]
    while True:
        code, out, err = apollo(two_runs, "runs", *flags)
        assert code == 0, err[-2000:]
        paged.append(out.splitlines()[1].split()[0])
        if "older runs" not in err:  # the oldest page names no next one (there is none)
            break
        assert f"older runs: add --before {paged[-1]}" in err
        flags = ["--limit", "1", "--before", paged[-1]]
    assert paged == everything and len(paged) >= 2
    code, out, err = apollo(two_runs, "runs", "--limit", "1", "--before", paged[-1])
    assert (code, out) == (0, "") and f"no runs before {paged[-1]}" in err
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
