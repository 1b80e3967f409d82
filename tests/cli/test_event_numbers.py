"""One numbering of a run's events, 1..n, in every place a user reads it (issue 31, item 7).

`apollo show` numbers events 1..n and `apollo fork --at` takes those numbers; the HTML page,
`apollo solve`'s progress lines and `apollo replay --verify` use the same numbers, with the
stream sequence beside them where it is shown at all.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import msgspec
import pytest

from engine.cli.render import numbered_progress
from tests.cli.support import DATASET, copy_of
from tests.cli.support import apollo as _apollo
from tests.replay.support import golden


def _show_json(data: Path, run_id: str) -> list[dict]:
    code, out, err = _apollo(data, "show", run_id, "--json")
    assert code == 0, err[-2000:]
    return [json.loads(line) for line in out.splitlines()]


def test_the_html_page_numbers_events_as_show_does(two_runs: Path, tmp_path: Path) -> None:
    """The second run's page labels its rows 1..n (its stream sequences start past the first run's)."""
    rows = _show_json(two_runs, "solve-abd2")
    assert rows[0]["seq"] > 1
    page = tmp_path / "t.html"
    code, _, err = _apollo(two_runs, "show", "solve-abd2", "--html", str(page))
    assert code == 0, err[-2000:]
    labels = [int(n) for n in re.findall(r"<span class='seq'[^>]*>(\d+)</span>", page.read_text())]
    assert labels == [row["n"] for row in rows] == list(range(1, len(rows) + 1))
    assert f"title='stream sequence {rows[0]['seq']}'" in page.read_text()


def test_a_forks_page_names_the_parent_event_it_continues_by_its_number(two_runs: Path, tmp_path: Path) -> None:
    """`fork --at 3` then `show FORK --html`: the fork's column says it continues after event 3."""
    two_runs = copy_of(two_runs, tmp_path)  # the fork stays out of the runs other tests list
    code, _, err = _apollo(two_runs, "fork", "solve-abd2", "--at", "3", "--no-wait", "--run-id", "fork-numbers")
    assert code == 0, err[-2000:]
    page = tmp_path / "fork.html"
    code, _, err = _apollo(two_runs, "show", "fork-numbers", "--html", str(page))
    assert code == 0, err[-2000:]
    seq = _show_json(two_runs, "solve-abd2")[2]["seq"]
    assert f"after its event 3 (seq {seq})" in page.read_text()


def test_fork_at_a_stream_sequence_says_which_number_to_give(two_runs: Path) -> None:
    """A user who copies a stream sequence into --at is told the event's number."""
    rows = _show_json(two_runs, "solve-abd2")
    seq = rows[3]["seq"]
    assert seq > len(rows)
    code, out, err = _apollo(two_runs, "fork", "solve-abd2", "--at", str(seq))
    assert code == 1 and out == ""
    assert f"{seq} is the stream sequence of its event 4: use --at 4" in err


def test_progress_lines_count_the_runs_events_from_one() -> None:
    """The callback `solve` follows a run with numbers each new event 1, 2, 3... whatever its sequence."""
    lines: list[str] = []
    follow = numbered_progress(lines.append)
    for record in golden("good_code_then_answer"):
        follow(msgspec.structs.replace(record, seq=record.seq + 1500))
    assert [int(line.split("]")[0].strip(" [")) for line in lines] == list(range(1, len(lines) + 1))
    assert "problem.submitted" in lines[0]


def test_solve_streams_the_numbers_show_and_fork_take(tmp_path: Path) -> None:
    """A second solve over the same log streams [1]..[n], the numbers `show` prints, not stream sequences."""
    if not DATASET.exists():
        pytest.skip(f"{DATASET} is not here")
    data = tmp_path / "data"
    for index, run_id in ((0, "solve-first"), (1, "solve-second")):
        code, out, err = _apollo(data, "solve", "--from-dataset", str(DATASET), "--index", str(index),
                                 "--run-id", run_id)
        assert code == 0, err[-2000:]
    streamed = [int(m) for m in re.findall(r"^\s+\[\s*(\d+)\]", out, re.MULTILINE)]
    assert streamed == [row["n"] for row in _show_json(data, "solve-second")]
