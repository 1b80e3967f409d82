"""`apollo runs`, `show`, `fork`, `replay` and `diff` as a user runs them, over a real embedded nats-server.

Runs are made with `apollo solve` and the scripted demo model (the ``two_runs`` fixture).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.support import apollo as _apollo


def test_runs_lists_newest_first_with_its_columns(two_runs: Path) -> None:
    """The later run comes first; the header names time, workflow, model, dataset, score and duration."""
    code, out, err = _apollo(two_runs, "runs")
    assert code == 0, err[-2000:]
    header, first, second = out.splitlines()[:3]
    assert header.split()[:8] == ["RUN", "STARTED", "WORKFLOW", "MODEL", "DATASET", "STATUS", "SCORE", "TIME"]
    assert first.startswith("solve-abd2") and second.startswith("solve-abc1")
    assert "gsm8k" in first and "completed" in first and "scripted:" in first


def test_runs_json_and_filters(two_runs: Path) -> None:
    """--json prints the filtered rows; a filter that matches nothing says so."""
    code, out, _ = _apollo(two_runs, "runs", "--json", "--limit", "1", "--dataset", "gsm8k", "--since", "1d")
    assert code == 0
    [row] = json.loads(out)
    assert row["run_id"] == "solve-abd2" and row["model"].startswith("scripted:") and row["duration_s"] > 0
    code, out, err = _apollo(two_runs, "runs", "--model", "no-such-model")
    assert code == 0 and out == "" and "no runs match these filters" in err


@pytest.mark.parametrize("flags", [["--limit", "0"], ["--since", "last tuesday"], ["--status", "done"],
                                   ["--until", "2026-02-30"], ["--limit", "x"]])
def test_garbage_runs_flags_are_one_line_usage_errors(two_runs: Path, flags: list[str]) -> None:
    """Bad filter values end with exit 2 and one error line naming the flag."""
    code, _, err = _apollo(two_runs, "runs", *flags)
    assert code == 2 and err.strip().splitlines()[-1].startswith("apollo runs: error: argument")
    assert "Traceback" not in err


def test_show_numbers_a_runs_events_from_one_and_takes_a_prefix(two_runs: Path) -> None:
    """`show solve-abd` finds the run; its lines are numbered 1..n with no gaps from other runs."""
    code, out, err = _apollo(two_runs, "show", "solve-abd")
    assert code == 0, err[-2000:]
    numbers = [int(line.split()[0]) for line in out.splitlines() if line.split()[0].isdigit()]
    assert numbers == list(range(1, len(numbers) + 1)) and len(numbers) > 5
    code, out, _ = _apollo(two_runs, "show", "solve-abd", "--json")
    rows = [json.loads(line) for line in out.splitlines()]
    assert [row["n"] for row in rows] == numbers and rows[0]["seq"] > 1  # the stream's sequence is kept too


def test_an_ambiguous_prefix_lists_the_candidates(two_runs: Path) -> None:
    """`solve-ab` matches both runs: one line naming them, for show, replay, fork and diff alike."""
    for args in (["show", "solve-ab"], ["replay", "solve-ab"], ["fork", "solve-ab", "--at", "2"],
                 ["diff", "solve-ab", "solve-abc1"]):
        code, out, err = _apollo(two_runs, *args)
        assert code == 1 and out == "", err
        assert err.strip().splitlines()[-1] == ("apollo: error: run id prefix 'solve-ab' is ambiguous: 2 runs "
                                                "match (solve-abc1, solve-abd2); give more of the id")


def test_html_writes_the_page_and_prints_no_timeline(two_runs: Path, tmp_path: Path) -> None:
    """`show --html FILE` writes the page; standard output stays empty."""
    page = tmp_path / "t.html"
    code, out, err = _apollo(two_runs, "show", "solve-abc1", "--html", str(page))
    assert code == 0 and out == "" and f"wrote {page}" in err
    assert "problem.submitted" in page.read_text()


def test_html_to_an_unwritable_place_is_one_line(two_runs: Path, tmp_path: Path) -> None:
    """`show --html` into a folder that is not there names the file and why, no traceback."""
    page = tmp_path / "missing" / "t.html"
    code, out, err = _apollo(two_runs, "show", "solve-abc1", "--html", str(page))
    assert code == 1 and out == ""
    assert err.strip().splitlines()[-1] == f"apollo: error: cannot write {page}: No such file or directory"


def test_fork_at_takes_show_numbers_refuses_past_the_end_and_prints_the_result(two_runs: Path) -> None:
    """--at n+1 is refused naming the run's length; a waiting fork ends with its answer and grade."""
    _, out, _ = _apollo(two_runs, "show", "solve-abc1", "--json")
    events = [json.loads(line) for line in out.splitlines()]
    code, out, err = _apollo(two_runs, "fork", "solve-abc1", "--at", str(len(events) + 1))
    assert code == 1 and out == ""
    assert f"--at {len(events) + 1} is past the end of run solve-abc1: it has {len(events)} events" in err
    asked = next(row["n"] for row in events if row["event"]["type"] == "model.call_requested")
    code, out, err = _apollo(two_runs, "fork", "solve-abc", "--at", str(asked))
    assert code == 0, err[-2000:]
    fork_id = out.splitlines()[0]
    assert f"after its event {asked} (seq {events[asked - 1]['seq']};" in err
    assert f"run:     {fork_id} (completed" in out and "answer:" in out and "grade:" in out


@pytest.mark.parametrize("at", ["0", "-3", "x", "1.5"])
def test_garbage_fork_at_is_a_usage_error(at: str, capsys: pytest.CaptureFixture[str]) -> None:
    """--at takes an event number from 1; anything else stops at the parser naming the flag."""
    from engine.cli.main import main

    with pytest.raises(SystemExit) as info:
        main(["fork", "r-1", "--at", at])
    assert info.value.code == 2 and "argument --at" in capsys.readouterr().err


def test_diff_takes_prefixes_and_numbers_events_as_show_does(two_runs: Path) -> None:
    """Two runs of different problems differ at their first event, numbered 1 like `apollo show`."""
    code, out, err = _apollo(two_runs, "diff", "solve-abc", "solve-abd")
    assert code == 0, err[-2000:]
    assert "A: solve-abc1" in out and "B: solve-abd2" in out
    assert "first difference: event 1 (A seq 1 problem.submitted" in out
